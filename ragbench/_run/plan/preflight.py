"""The pre-flight: everything a run can check before anything heavy loads or anything is written.

The core checks the run's own options (numbers, output folder, engine strings and options) and asks
every plugin for its own checks through one hook each, so a third-party task, system, metric or
engine adds checks without the core knowing it:

  Task.preflight(check)                  data found, its first records read (the default), plus a
                                         task's prerequisites (tokenizers, services ...)
  System.preflight(check, task)          the system on that task (default: `System.check`)
  Metric.preflight(check, task)          the metric on that task (default: nothing)
  Engine.preflight(model, options)       an engine string and its options, without loading it
                                         (default: names and typed values `__init__` accepts)
  System.engine_needs(task) with         what the system needs of its engines: the options the engine
  Engine.meet_needs / missing_vocabulary loader will start them with, what no option can give

A hook reports through `check.problem("one line: what, where; the option that fixes it")`, or by
raising `ConfigError` inside `with check.step(...)`. Every problem is collected; the run stops with
all of them at once (`PreflightError`, exit 2) before its folder exists.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._checks import Preflight
from ..._cost.spending_cap import check_cap
from ..._errors import ConfigError
from ..._registry import Registry
from ..._storage.rundir import RunDir
from ..._task.protocols import task_corpus
from ..._values.environment import environment_problems
from ..._values.llm_calls import EngineNeeds
from ..._values.run_config import RunConfig
from ..._values.run_groups import RunJudging, RunModels, RunRetrieval
from ..models.sent_to import model_urls
from .planning import PlannedTask, needs, plan
from .run_folder import check_cache_files, check_output_folder
from .task_corpus import check_task_corpora, corpus_changed_on_resume, use_task_corpus

if TYPE_CHECKING:
    from ..._engines.base import Engine


# --- the run's own options ----------------------------------------------------------------------------
def check_run_options(config: RunConfig, check: Preflight, registry: Registry) -> None:
    """What each group of the run's options finds wrong with its own (`RunConfig.problems`: numbers of the right
    type and range, a cache path that is not a folder), and a --max-cost with a price for each remote model and
    judge of the run; and ragbench's settings in the environment that cannot be read (`environment_problems`)."""
    for problem in [*config.problems(), *environment_problems()]:
        check.problem(problem)
    if config.limits.max_cost is not None:
        with check.step(f"--max-cost {config.limits.max_cost:g}"):
            urls = model_urls(config.models, config.judging, registry)  # where the engines will send their calls
            check_cap(config.limits.max_cost, config.models, config.judging, urls)


def engine_needs(planned: list[Any]) -> list[Any]:
    """What the run's systems need of the engines serving them, task by task (`System.engine_needs`); a task whose
    examples hold images (`Task.holds_images`) needs a model that takes them, unless its system says it sends none
    (`EngineNeeds(images=False)`)."""
    out = []
    for p in planned:
        need = p.system.engine_needs(p.task)
        if getattr(p.task, "holds_images", False) and (need is None or need.images is None):
            system = getattr(p.system, "name", "") or type(p.system).__name__
            need = replace(need or EngineNeeds(system=f"{system} on {p.task.name}"), images=True)
        if need is not None:
            out.append(need)
    return out


def needs_problems(
    engine_class: type[Engine], name: str, options: dict[str, Any], needs: list[Any]
) -> tuple[dict[str, Any], list[str], list[str]]:
    """The options the engine loader will start the engine with for the systems' `needs`, what the engine or
    model cannot give them whatever its options (another model or engine is needed: said first), and what
    options or vocabulary are missing (an option too small, entries its tokenizer lacks, read without the
    weights)."""
    options, problems = engine_class.meet_needs(name, options, needs)
    cannot: list[str] = []
    for need in needs:
        if need.ensembles and not engine_class.decodes_ensembles:
            cannot.append(
                f"{need.system} decodes ensembles of prompts (every prompt's next-token logits at every "
                f"step), which the {engine_class.kind} engine cannot give; run the model with --model hf:MODEL"
            )
        if need.stop_known and not engine_class.says_which_stop:
            cannot.append(
                f"{need.system} reads whether each output ended at a stop string or at the model's own end, which "
                f"the {engine_class.kind} engine cannot tell (its API does not say); run the model with --model "
                "vllm:, hf:, scripted: or replay:"
            )
        if need.images and (problem := engine_class.images_problem(name, options)):
            cannot.append(f"{need.system} sends the model images: {problem}")
        if need.tools:
            tools_cannot, tools_unmet = _tools_problems(engine_class, name, options, need.system)
            cannot += tools_cannot
            problems += tools_unmet
        missing = engine_class.missing_vocabulary(name, options, need.logprob_tokens) if need.logprob_tokens else None
        if missing:
            problems.append(
                f"{need.system} reads log-probs of {', '.join(missing)}, which are not single entries of "
                f"{name}'s vocabulary; use {need.models}"
            )
    return options, cannot, problems


def _tools_problems(
    engine_class: type[Engine], name: str, options: dict[str, Any], system: str
) -> tuple[list[str], list[str]]:
    """Why `system` cannot offer tools to `name` on this engine at all (an engine that sends none, a chat
    template that drops them), and the option it still lacks (the tool-call format of a model run locally)."""
    if not engine_class.calls_tools:
        return [
            f"{system} needs a model that calls tools, which the {engine_class.kind} engine cannot send; "
            "run the model with --model openai:, vllm:, hf:, scripted: or replay:"
        ], []
    template = engine_class.tools_problem(name, options)
    cannot = [f"{system} needs a model that calls tools: {template}"] if template else []
    unmet = (
        [
            f"{system} offers the model tools: the {engine_class.kind} engine reads the model's "
            "calls from its text in the format --model-arg tool_parser=NAME names (e.g. hermes)"
        ]
        if _reads_calls_from_text(engine_class) and options.get("tool_parser") is None
        else []
    )
    return cannot, unmet


def _reads_calls_from_text(engine_class: type) -> bool:
    """An engine that runs the model itself has a `tool_parser` option: the model family's tool-call format."""
    return "tool_parser" in inspect.signature(engine_class).parameters


def check_engines(
    models: RunModels,
    judging: RunJudging,
    registry: Any,
    check: Preflight,
    uses_llm: bool,
    uses_nli: bool,
    needs: list[Any] | None = None,
    uses_judges: bool = True,
) -> None:
    """Every engine the run will load (--model, --role-model, --judge, --nli): a known engine, options it
    accepts, a server that answers, and (the system's engines) what the systems need of them; nothing is
    loaded."""
    for flag, args_flag, spec, options in _named_engines(models, judging, uses_llm, uses_nli, uses_judges):
        where = f"{flag}{'' if flag.endswith('=') else ' '}{spec}"
        with check.step(where):
            kind, sep, name = spec.partition(":")
            if not sep or not name:
                raise ConfigError(
                    f"{where}: is not of the form engine:model (e.g. hf:Qwen/Qwen2.5-0.5B-Instruct, "
                    "openai:gpt-4o-mini, replay:calls.jsonl); `ragbench list engines` names the engines"
                )
            try:
                engine_class = registry.load("engines", kind)
            except ConfigError as exc:
                raise ConfigError(f"{where}: {exc}") from None
            system_needs = needs if flag.startswith(("--model", "--role-model")) else None
            for problem in _engine_problems(engine_class, name, options, system_needs, where, check):
                if flag != "--model":
                    problem = problem.replace("--model-arg ", args_flag).replace("--base-url", f"{args_flag}base_url")
                check.problem(f"{where}: {problem}")


def _named_engines(
    models: RunModels, judging: RunJudging, uses_llm: bool, uses_nli: bool, uses_judges: bool
) -> list[tuple[str, str, str, Mapping[str, object]]]:
    """(option, how its engine options are written, engine:model, options) of each engine the run loads; an
    engine's messages name --model-arg and --base-url, rewritten by `check_engines` for the engine they are about."""
    from ..._engines import EMBEDDED_MODEL

    named: list[tuple[str, str, str, Mapping[str, object]]] = (
        [("--model", "--model-arg ", models.model or EMBEDDED_MODEL, models.model_args)] if uses_llm else []
    )
    named += [
        (f"--role-model {role}=", f"--role-model-arg {role}.", model, models.role_model_args.get(role, {}))
        for role, model in models.role_models.items()
    ]
    named += [
        ("--judge", f"--judge-arg {i}.", model, judging.judge_args.get(str(i), {}))
        for i, model in enumerate(judging.judges if uses_judges else [])
    ]
    if judging.nli and uses_nli:
        named.append(("--nli", "--nli-arg ", judging.nli, judging.nli_args))
    return named


def _engine_problems(
    engine_class: type[Engine],
    name: str,
    options: Mapping[str, object],
    needs: list[Any] | None,
    where: str,
    check: Preflight,
) -> list[str]:
    """What is wrong with one engine's options (and, given the systems' `needs`, what they need of it: a model it
    cannot serve is told to `check` at once, first)."""
    from ..._engines.replicas import RAY_OPTION_TYPES, replica_option_problems

    plain = {k: v for k, v in options.items() if k not in RAY_OPTION_TYPES and k != "chat"}
    problems = replica_option_problems(options)
    if not isinstance(options.get("chat", False), bool):
        problems.append(
            f"--model-arg chat={options['chat']}: takes true or false (whether the model is a "
            "chat model; every engine takes it)"
        )
    if needs:
        plain, cannot, unmet = needs_problems(engine_class, name, plain, needs)
        for problem in cannot:
            check.problem(f"{where}: {problem}", first=True)
        problems += unmet
    urls = plain.get("base_url")
    for url in urls if isinstance(urls, (list, tuple)) else [urls]:
        problems += engine_class.preflight(name, {**plain, **({"base_url": url} if url else {})})
    return problems


def check_documents_to_retrieve(
    retrieval: RunRetrieval, system_name: str, registry: Any, planned: list[Any], check: Preflight
) -> None:
    """A system that retrieves (its declared `retrieves`) on a task whose examples carry no documents
    (`Task.own_documents` False), with a retriever that returns only an example's own documents
    (`Retriever.example_documents_only`: the default `provided`, `example_bm25`, `example_dense`), would
    answer closed book under its own name: one problem per task. `--retriever none` asks for that run."""
    from ..._retrieval import DEFAULT_RETRIEVER

    blind = [
        p for p in planned if p.system is not None and p.system.declares.retrieves and p.task.own_documents is False
    ]
    name = retrieval.retriever or DEFAULT_RETRIEVER
    try:
        retriever_class = registry.load("retrievers", name) if blind else None
    except ConfigError:
        return  # an unknown retriever: said where the run builds it
    if retriever_class is None or not retriever_class.example_documents_only:
        return
    for p in blind:
        corpus = task_corpus(p.task)
        if corpus is not None and retrieval.retriever is None:
            continue  # its corpus is searched unless other tasks' differ: `check_task_corpora` says so
        system = p.system.name or system_name
        shipped = f"leave --retriever out to search the corpus it ships ({corpus.name}, BM25), " if corpus else ""
        check.problem(
            f"task {p.name}: its examples carry no documents and retriever {name} returns only an "
            f"example's own, so system {system} would answer closed book; {shipped}search a corpus index "
            f"(--retriever bm25|dense --retriever-arg index=DIR, from ragbench index build), use --system "
            f"closed_book, or pass --retriever none to run {system} without documents on purpose"
        )


def check_searches_by_picture(
    retrieval: RunRetrieval, system_name: str, registry: Any, planned: list[Any], check: Preflight
) -> None:
    """A system that searches by the question's picture (its declared `searches_by_picture`) on a task whose questions
    come with pictures (`Task.question_images`) needs a retriever that searches by picture (`Retriever.image_queries`):
    one problem per task."""
    from ..._retrieval import DEFAULT_RETRIEVER

    pictured = [
        p
        for p in planned
        if p.system is not None and p.system.declares.searches_by_picture and getattr(p.task, "question_images", False)
    ]
    name = retrieval.retriever or DEFAULT_RETRIEVER
    try:
        retriever_class = registry.load("retrievers", name) if pictured else None
    except ConfigError:
        return  # an unknown retriever: said where the run builds it
    if retriever_class is None or retriever_class.image_queries:
        return
    for p in pictured:
        check.problem(
            f"task {p.name}: system {p.system.name or system_name} searches by each question's picture, which "
            f"retriever {name} cannot (it searches by text); pass a retriever that searches by picture, or "
            f"{p.system.declares.searches_by_picture} to search by text only"
        )


def own_query_warnings(retrieval: RunRetrieval, system_name: str, registry: Any, planned: list[Any]) -> list[str]:
    """A system that searches with queries of its own (its declared `searches_own_queries`) over a retriever that gives
    every query the example's own documents in their given order (`fixed_documents` and `example_documents_only`:
    `provided`; a reranker reorders them per query) gets the same passages from every search: a warning per
    task, naming retrievers that answer such queries; `ragbench check` lists them and a run prints them before
    it starts. Tasks whose examples carry no documents are refused by `check_documents_to_retrieve` instead."""
    from ..._retrieval import DEFAULT_RETRIEVER

    searching = [
        p
        for p in planned
        if p.system is not None and p.system.declares.searches_own_queries and p.task.own_documents is not False
    ]
    name = retrieval.retriever or DEFAULT_RETRIEVER
    try:
        retriever_class = registry.load("retrievers", name) if searching and not retrieval.reranker else None
    except ConfigError:
        return []  # an unknown retriever: said where the run builds it
    if retriever_class is None or not (retriever_class.fixed_documents and retriever_class.example_documents_only):
        return []
    return [
        f"task {p.name}: system {p.system.name or system_name} searches with queries of its own, but retriever "
        f"{name} gives every query the example's own passages in their given order, so each of its searches "
        "returns the same passages; --retriever example_bm25 ranks the example's passages for each query, or "
        "search a corpus with --retriever bm25 --retriever-arg index=DIR (ragbench index build)"
        for p in searching
    ]


@dataclass(frozen=True)
class Preflighted:
    """A run as its pre-flight leaves it, each part derived once for what comes after: its config as the run has it
    from then on (with the retriever its tasks' own corpus gives: `use_task_corpus`), its planned tasks, its
    folder, what was checked, and the warnings the run prints as it starts (`own_query_warnings`)."""

    config: RunConfig
    planned: list[PlannedTask]
    run_dir: RunDir
    checks: Preflight
    query_warnings: list[str]
    task_index: Path | None  # the index cache's folder of the tasks' own corpus the run searches (`use_task_corpus`)


def preflight(
    config: RunConfig, registry: Any, check: Preflight | None = None, resume_held: bool = False
) -> Preflighted:
    """The whole pre-flight of a run, stage after stage, each taking what the one before derived: its options,
    its plan (every plugin's hooks), the retriever its tasks' corpus gives, its folder, its retrieval, its caches,
    its engines. With `resume_held` (the estimate's pilot), a run its folder holds is continued (--resume)
    unless --overwrite replaces it. Raises `PreflightError` listing every problem."""
    from ..._components import check_components

    check = check if check is not None else Preflight()
    check_run_options(config, check, registry)
    planned = plan(config.what, config.judging, registry, check, roles=tuple(config.models.role_models))
    check_task_corpora(config.retrieval, planned, check)
    config, task_index = use_task_corpus(config, planned)  # the run's identity and folder are read from this config
    run_dir = RunDir(config.run_dir())
    if resume_held and not config.output.overwrite and run_dir.record is not None:
        config = config.changed(resume=True)
    identity = config.identity()
    if not corpus_changed_on_resume(config.output, config.retrieval, identity, planned, run_dir, check):
        check_output_folder(config.output, identity, run_dir, check)
    check_documents_to_retrieve(config.retrieval, config.what.system, registry, planned, check)
    check_searches_by_picture(config.retrieval, config.what.system, registry, planned, check)
    query_warnings = own_query_warnings(config.retrieval, config.what.system, registry, planned)
    for line in query_warnings:
        check.warn(line)
    check_components(config.retrieval, registry, check)
    check_cache_files(config.output, config.retrieval, run_dir.path, planned, check)
    try:
        system_class = registry.load("systems", config.what.system)
    except ConfigError:
        system_class = None  # reported by plan
    uses_llm = system_class is not None and system_class.declares.uses_llm
    check_engines(
        config.models,
        config.judging,
        registry,
        check,
        uses_llm,
        needs(planned, "nli"),
        engine_needs(planned),
        needs(planned, "judge"),
    )
    check.raise_if_failed()
    return Preflighted(config, planned, run_dir, check, query_warnings, task_index)

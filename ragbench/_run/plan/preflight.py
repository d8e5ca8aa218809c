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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._checks import Preflight
from ..._config.retrieval import RunRetrieval
from ..._config.run_config import RunConfig
from ..._cost.prices import check_cap
from ..._errors import ConfigError
from ..._registry import Registry
from ..._storage.rundir import RunDir
from ..._values.environment import environment_problems
from .engine_checks import check_engines, engine_needs
from .metric_plan import needs
from .planned_task import PlannedTask
from .planning import plan
from .run_folder import check_cache_files, check_output_folder, corpus_changed_on_resume
from .task_corpus import use_task_corpus


# --- the run's own options ----------------------------------------------------------------------------
def check_run_options(config: RunConfig, check: Preflight, registry: Registry) -> None:
    """What each group of the run's options finds wrong with its own (`RunConfig.problems`: numbers of the right
    type and range, a cache path that is not a folder), and a --max-cost with a price for each remote model and
    judge of the run; and ragbench's settings in the environment that cannot be read (`environment_problems`)."""
    for problem in [*config.problems(), *environment_problems()]:
        check.problem(problem)
    if config.limits.max_cost is not None:
        with check.step(f"--max-cost {config.limits.max_cost:g}"):
            check_cap(config.limits.max_cost, config.models, config.judging, registry)


def check_documents_to_retrieve(
    retrieval: RunRetrieval, system_name: str, registry: Any, planned: list[Any], check: Preflight
) -> None:
    """A system that retrieves (its declared `retrieves`) on a task whose examples carry no documents
    (`Task.own_documents` False), with a retriever that returns only an example's own documents
    (`Retriever.example_documents_only`: the default `provided`, `example_bm25`, `example_dense`), would
    answer closed book under its own name: one problem per task. `--retriever none` asks for that run."""
    from ..._retrieval import DEFAULT_RETRIEVER

    blind = [
        p
        for p in planned
        if p.system is not None
        and p.system.declares.retrieves
        and p.task.own_documents is False
        and not p.task.page_retrieval  # pages: `check_page_retrieval`
    ]
    name = retrieval.retriever or DEFAULT_RETRIEVER
    try:
        retriever_class = registry.load("retrievers", name) if blind else None
    except ConfigError:
        return  # an unknown retriever: said where the run builds it
    if retriever_class is None or not retriever_class.example_documents_only:
        return
    for p in blind:
        corpus = p.corpus
        if corpus is not None and retrieval.retriever is None:
            continue  # its corpus is searched unless other tasks' differ: `use_task_corpus` says so
        system = p.system.name or system_name
        shipped = f"leave --retriever out to search the corpus it ships ({corpus.name}, BM25), " if corpus else ""
        check.problem(
            f"task {p.name}: its examples carry no documents and retriever {name} returns only an "
            f"example's own, so system {system} would answer closed book; {shipped}search a corpus index "
            f"(--retriever bm25|dense --retriever-arg index=DIR, from ragbench index build), use --system "
            f"closed_book, or pass --retriever none to run {system} without documents on purpose"
        )


def check_page_retrieval(
    retrieval: RunRetrieval, system_name: str, registry: Any, planned: list[Any], check: Preflight
) -> None:
    """A system that retrieves on a task whose corpus is pages (`Task.page_retrieval`: ViDoRe's) with a retriever
    whose passages are not pages (`Retriever.page_images`: bm25, dense, the default `provided`) would score no page
    the gold names, every figure 0: one problem per task, naming the retrievers that search pages."""
    from ..._retrieval import DEFAULT_RETRIEVER

    paged = [p for p in planned if p.system is not None and p.system.declares.retrieves and p.task.page_retrieval]
    name = retrieval.retriever or DEFAULT_RETRIEVER
    try:
        retriever_class = registry.load("retrievers", name) if paged else None
    except ConfigError:
        return  # an unknown retriever: said where the run builds it
    if retriever_class is None or retriever_class.page_images:
        return
    for p in paged:
        check.problem(
            f"task {p.name}: its corpus is the dataset's pages (images), which retriever {name} does not search: none "
            f"of its passages is a page, so system {p.system.name or system_name} would retrieve no page the gold "
            f"names; retrieve pages with {p.task.page_retrieval}"
        )


def check_searches_by_picture(
    retrieval: RunRetrieval, system_name: str, registry: Any, planned: list[Any], check: Preflight
) -> None:
    """A system that searches by the question's picture (its declared `searches_by_picture`) on a task whose questions
    come with pictures (`Task.question_images`) needs a retriever that searches by picture (`Retriever.image_queries`):
    one problem per task."""
    from ..._retrieval import DEFAULT_RETRIEVER

    pictured = [
        p for p in planned if p.system is not None and p.system.declares.searches_by_picture and p.task.question_images
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
            f"retriever {name} cannot (it takes no picture as a query); pass a retriever that searches by picture, or "
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
    config, corpus, task_index = use_task_corpus(config, planned, check)  # the run's identity and folder: from this
    run_dir = RunDir(config.run_dir())
    if resume_held and not config.output.overwrite and run_dir.record is not None:
        config = config.changed(resume=True)
    identity = config.identity()
    if not corpus_changed_on_resume(config.output, config.retrieval, identity, corpus, run_dir, check):
        check_output_folder(config.output, identity, run_dir, check)
    check_documents_to_retrieve(config.retrieval, config.what.system, registry, planned, check)
    check_page_retrieval(config.retrieval, config.what.system, registry, planned, check)
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

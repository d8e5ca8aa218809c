"""The pre-flight of every engine a run loads (--model, --role-model, --judge, --nli): a known engine, the options
every engine takes (`chat`, the Ray replica options) and those it takes itself (`Engine.preflight`), and what the
run's systems need of their engines (`System.engine_needs`, met by `Engine.meet_needs` or said to be missing);
nothing is loaded."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..._checks import Preflight
from ..._config.judging import RunJudging
from ..._config.models import RunModels
from ..._errors import ConfigError
from ..._values.engine_needs import EngineNeeds
from ..._values.options import option_form, type_problem

if TYPE_CHECKING:
    from ..._engines.base import Engine


def engine_needs(planned: list[Any]) -> list[Any]:
    """What the run's systems need of the engines serving them, task by task (`System.engine_needs`); a task whose
    examples hold images (`Task.holds_images`) needs a model that takes them, unless its system says it sends none
    (`EngineNeeds(images=False)`)."""
    out = []
    for p in planned:
        need = p.system.engine_needs(p.task)
        if p.task.holds_images and (need is None or need.images is None):
            system = getattr(p.system, "name", "") or type(p.system).__name__
            need = replace(
                need or EngineNeeds(system=f"{system} on {p.task.name}"),
                images=True,
                no_images=p.task.text_only,
            )
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
            instead = f"; or {need.no_images}" if need.no_images else ""
            cannot.append(f"{need.system} sends the model images: {problem}{instead}")
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
    from ..._engines.replicas import RAY_OPTION_TYPES

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


def replica_option_problems(options: Mapping[str, Any]) -> list[str]:
    """The Ray replica options among `options` that are not of their type, one line each (every engine takes them:
    ragbench._engines.replicas)."""
    from ..._engines.replicas import RAY_OPTION_TYPES

    return [
        f"--model-arg {name}={options[name]}: Ray replicas take {problem} for {name} ({option_form(name, None, hint)})"
        for name, hint in RAY_OPTION_TYPES.items()
        if name in options and (problem := type_problem(options[name], hint))
    ]

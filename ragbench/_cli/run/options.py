"""The options of a run on the command line (`ragbench`, `ragbench check`) and the RunConfig fields
they become; a malformed one is a ConfigError."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict, TypeVar

import click

from ..._errors import ConfigError
from ..._values.ceiling import MAX_PROMPT_CHARS, MAX_STEPS
from ..._values.options import parse_assignments
from ..._values.run_config import MAX_INFLIGHT, MAX_JUDGE_REPEATS, too_many

# a click command function, as the decorators below hand it back with their options
Command = TypeVar("Command", bound=Callable[..., Any])


def split_names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


def repeats_at_most(ctx: click.Context, _param: click.Parameter, value: int | None) -> int | None:
    """--judge-repeats over its bound, refused as the command line is read: a run makes its raters for every
    judged example (ragbench._values.run_config.MAX_JUDGE_REPEATS)."""
    if problem := too_many("--judge-repeats", "judge_repeats", value):
        raise click.UsageError(problem, ctx)
    return value


def judge_repeats_option(default: str) -> Callable[[Command], Command]:
    """--judge-repeats, of a run (`default`: "once") or of a rescoring ("the run's")."""
    return click.option(
        "--judge-repeats",
        default=None,
        type=click.IntRange(min=1),
        callback=repeats_at_most,
        metavar="K",
        help=f"judge every example K times per judge (1 to {MAX_JUDGE_REPEATS}) and report the judges' agreement "
        f"(default: {default})",
    )


def data_paths(items: tuple[str, ...]) -> dict[str, str]:
    return {k: str(v) for k, v in parse_assignments(items, "--data").items()}


judging_options = [  # run, check, score and rescore
    click.option(
        "--human-labels",
        default=None,
        metavar="FILE",
        help="human labels of judged keys (JSONL or CSV: id, metric, label[, task]): results.json checks the "
        "judges against them and gives the prediction-powered interval (docs/metrics.md)",
    ),
    click.option(
        "--price-table",
        default=None,
        metavar="FILE",
        help="judge prices, USD per million tokens (YAML/JSON: MODEL: {prompt: X, completion: Y}), over "
        "the built-in OpenAI prices (docs/metrics.md)",
    ),
]

# a run's display option, taken by every command that runs examples or judges (run, score, reproduce, rescore)
no_progress_option = click.option(
    "--no-progress", is_flag=True, help="no progress bar (examples done of the run's, ETA)"
)
common_options = [
    click.option(
        "--model",
        default=None,
        help="engine:model, e.g. hf:Qwen/Qwen2.5-0.5B-Instruct, "
        "vllm:/models/llama, openai:gpt-4o-mini, replay:calls.jsonl (default: embedded SmolLM2)",
    ),
    click.option("--model-arg", multiple=True, metavar="K=V", help="engine option (batch_size, dtype, base_url ...)"),
    click.option(
        "--base-url",
        multiple=True,
        help="OpenAI-compatible server URL (default: $OPENAI_BASE_URL); "
        "repeat it for several servers of one model (least-loaded dispatch)",
    ),
    click.option(
        "--judge", multiple=True, metavar="MODEL", help="judge engine:model for LLM-judge metrics (repeatable)"
    ),
    click.option(
        "--judge-arg",
        multiple=True,
        metavar="N.K=V",
        help="engine option of the N-th --judge (from 0), e.g. 1.base_url=http://127.0.0.1:8001/v1",
    ),
    judge_repeats_option("once"),
    click.option(
        "--nli",
        default=None,
        metavar="MODEL",
        help="NLI engine:model for citation/claim metrics, e.g. "
        "hf:google/t5_xxl_true_nli_mixture or replay:nli_calls.jsonl",
    ),
    click.option(
        "--nli-format",
        default="true",
        show_default=True,
        type=click.Choice(["true", "prompt"]),
        help="true: TRUE/ALCE 'premise: .. hypothesis: ..' -> '1'; prompt: LLM-as-NLI chat prompt",
    ),
    click.option("--nli-arg", multiple=True, metavar="K=V", help="NLI engine option (batch_size, dtype ...)"),
    click.option(
        "--metrics",
        default=None,
        metavar="NAME[,NAME]",
        help="metrics of every task: NAME,... replaces "
        "the tasks' own, +NAME adds to them, TASK:NAME / TASK:+NAME for one task (ragbench list metrics)",
    ),
    click.option("--metric-arg", multiple=True, metavar="METRIC.K=V", help="metric option, e.g. mauve.featurizer=PATH"),
    click.option("--output", default=None, help="run folder (default: runs/<system>__<model>__<config hash>)"),
    # numbers are ranged by the pre-flight (ragbench._run.plan.preflight.RUN_NUMBERS), one line each
    click.option("--seed", default=0, show_default=True, type=int, help="seeds sampling and the bootstrap (>= 0)"),
    click.option(
        "--max-inflight",
        default=None,
        type=int,
        help=f"examples running at once, at most {MAX_INFLIGHT:,} (default: the model "
        "engine's batch size or concurrency, at least 64 and at most 256)",
    ),
    click.option("--cache", default=None, help="SQLite response cache (default: in the run folder)"),
    click.option(
        "--page-cache",
        default=None,
        metavar="PATH|off",
        help="cache of parsed pages and their embeddings, "
        "shared by runs (default: $RAGBENCH_PAGE_CACHE or ~/.cache/ragbench/pages.sqlite)",
    ),
    click.option("--task-arg", multiple=True, metavar="K=V", help="task option; TASK.K=V for one task"),
    click.option(
        "--bootstrap-iters",
        default=1000,
        show_default=True,
        type=int,
        help="bootstrap resamples of the 95% intervals (0: no intervals)",
    ),
    no_progress_option,
    *judging_options,
]


def with_common(func: Command) -> Command:
    for option in reversed(common_options):
        func = option(func)
    return func


def with_judging(func: Command) -> Command:
    for option in reversed(judging_options):
        func = option(func)
    return func


def judge_args_of(items: tuple[str, ...], judges: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """--judge-arg N.KEY=VALUE: each --judge's options by its position, the values read as YAML scalars."""
    out: dict[str, dict[str, object]] = {}
    for key, value in parse_assignments(items, "--judge-arg").items():
        index, _, option = key.partition(".")
        if not index.isdigit() or not option or int(index) >= len(judges):
            raise ConfigError(
                f"--judge-arg {key}=...: expected N.KEY with N the position of a --judge (0 to {len(judges) - 1})"
                if judges
                else f"--judge-arg {key}: there is no --judge"
            )
        out.setdefault(index, {})[option] = value
    return out


class RoleModels(TypedDict):
    """RunConfig's `role_models` (role -> engine:model) and `role_model_args` (role -> its engine's options)."""

    role_models: dict[str, str]
    role_model_args: dict[str, dict[str, object]]


def _role_models(items: tuple[str, ...], args: tuple[str, ...]) -> RoleModels:
    """--role-model ROLE=ENGINE:MODEL (repeatable) and --role-model-arg ROLE.KEY=VALUE."""
    models: dict[str, str] = {}
    for item in items:
        role, sep, model = item.partition("=")
        if not sep or not role.strip() or not model.strip():
            raise ConfigError(
                f"--role-model {item!r}: expected ROLE=ENGINE:MODEL, e.g. locator=hf:/models/smart-locator"
            )
        if role.strip() in models:
            raise ConfigError(f"--role-model {role.strip()}: given twice")
        models[role.strip()] = model.strip()
    options: dict[str, dict[str, object]] = {}
    for key, value in parse_assignments(args, "--role-model-arg").items():
        role, _, option = key.partition(".")
        if role not in models or not option:
            raise ConfigError(
                f"--role-model-arg {key}=...: expected ROLE.KEY with ROLE one of the --role-model roles "
                f"({', '.join(models) or 'none given'})"
            )
        options.setdefault(role, {})[option] = value
    return {"role_models": models, "role_model_args": options}


def common_kwargs(
    model: str | None,
    model_arg: tuple[str, ...],
    base_url: tuple[str, ...],
    judge: tuple[str, ...],
    judge_arg: tuple[str, ...],
    judge_repeats: int | None,
    nli: str | None,
    nli_format: str,
    nli_arg: tuple[str, ...],
    metrics: str | None,
    metric_arg: tuple[str, ...],
    output: str | None,
    seed: int,
    max_inflight: int | None,
    cache: str | None,
    page_cache: str | None,
    task_arg: tuple[str, ...],
    bootstrap_iters: int | None,
    no_progress: bool,
    human_labels: str | None,
    price_table: str | None,
) -> dict[str, Any]:
    model_args = parse_assignments(model_arg, "--model-arg")
    if base_url:
        model_args["base_url"] = base_url[0] if len(base_url) == 1 else list(base_url)
    return {
        "model": model,
        "model_args": model_args,
        "judges": list(judge),
        "judge_args": judge_args_of(judge_arg, judge),
        "judge_repeats": judge_repeats,
        "nli": nli,
        "nli_format": nli_format,
        "nli_args": parse_assignments(nli_arg, "--nli-arg"),
        "metric_args": parse_assignments(metric_arg, "--metric-arg"),
        "metrics": split_names(metrics or ""),
        "output": output,
        "seed": seed,
        "max_inflight": max_inflight,
        "cache": cache,
        "page_cache": page_cache,
        "task_args": parse_assignments(task_arg, "--task-arg"),
        "bootstrap_iters": bootstrap_iters,
        "progress": not no_progress,
        **judging_kwargs(human_labels, price_table),
    }


def judging_kwargs(human_labels: str | None, price_table: str | None) -> dict[str, str | None]:
    """--human-labels and --price-table, each file read once now so that a bad one fails before any work."""
    from ..._cost.prices import read_price_table
    from ..._reports.judging.human_labels import read_human_labels

    if human_labels:
        read_human_labels(human_labels)
    if price_table:
        read_price_table(price_table)
    return {"human_labels": human_labels, "price_table": price_table}


resume_option = click.option(
    "--resume", is_flag=True, help="continue the run in the output folder (failed examples are tried again)"
)
overwrite_option = click.option("--overwrite", is_flag=True, help="replace the run in the output folder")

run_options = [
    click.option(
        "--tasks",
        default=None,
        help="comma-separated task or group names (ragbench list tasks), or YAML task files (docs/yaml-tasks.md)",
    ),
    click.option(
        "--include-path",
        multiple=True,
        metavar="DIR",
        help="a folder of YAML tasks: --tasks may name "
        "any task (or group) declared by a *.yaml file under it (repeatable)",
    ),
    click.option("--system", default="vanilla", show_default=True, help="system name (ragbench list systems)"),
    click.option("--system-arg", multiple=True, metavar="K=V", help="system option, e.g. top_n=5"),
    click.option(
        "--top-k",
        default=None,
        type=click.IntRange(min=1),
        metavar="N",
        help="passages shown per reader call, set through the option the system declares for it (a system "
        "that declares none refuses it); applies to the run's one system",
    ),
    click.option("--data", multiple=True, metavar="TASK=PATH", help="local data file for a task"),
    click.option("--limit", default=None, type=int, help="first N records of each task"),
    resume_option,
    overwrite_option,
    click.option(
        "--fail-fast",
        is_flag=True,
        help="stop at the first failed example or bad record and print its "
        "traceback (for developing a plugin; --resume continues the run)",
    ),
    click.option(
        "--strict-infra",
        is_flag=True,
        help="fail an example when a judge/tool/retrieval call failed and "
        "was folded into its result (upstream's behaviour, counted, is the default)",
    ),
    click.option(
        "--max-steps-per-example",
        default=None,
        type=int,
        metavar="N",
        help=f"each example's ceiling of steps (model calls, searches, tool and recorded steps; default "
        f"{MAX_STEPS:,}): an example that reaches it fails as CeilingReached and the run goes on",
    ),
    click.option(
        "--max-cost",
        default=None,
        type=float,
        metavar="DOLLARS",
        help="stop the run before its LLM calls (system model and judges, priced as results.json prices them) "
        "would cost more than this, each batch checked at its worst first; --resume continues",
    ),
    click.option(
        "--max-prompt-chars-per-example",
        default=None,
        type=int,
        metavar="N",
        help=f"each example's ceiling of characters of prompts sent, summed over its model calls (default "
        f"{MAX_PROMPT_CHARS:,}): an example that reaches it fails as CeilingReached",
    ),
    click.option(
        "--retriever", default=None, help="retriever for ctx.retriever (ragbench list retrievers; default: provided)"
    ),
    click.option("--retriever-arg", multiple=True, metavar="K=V", help="retriever option, e.g. index=DIR"),
    click.option("--reranker", default=None, help="reranks every search's results (ragbench list rerankers)"),
    click.option("--reranker-arg", multiple=True, metavar="K=V", help="reranker option, e.g. model=DIR"),
    click.option("--refiner", default=None, help="refines the documents a reader shows (ragbench list refiners)"),
    click.option("--refiner-arg", multiple=True, metavar="K=V", help="refiner option, e.g. model=DIR"),
    click.option(
        "--role-model",
        multiple=True,
        metavar="ROLE=MODEL",
        help="engine:model for one role of the system "
        "(e.g. smart's reconstructor, locator, generator); other roles use --model",
    ),
    click.option(
        "--role-model-arg",
        multiple=True,
        metavar="ROLE.K=V",
        help="engine option of a --role-model, e.g. locator.gpu_memory_utilization=0.3",
    ),
]


def with_run_options(func: Command) -> Command:
    for option in reversed([*run_options, *common_options]):
        func = option(func)
    return func


def run_kwargs(
    tasks: str,
    include_path: tuple[str, ...],
    system: str,
    system_arg: tuple[str, ...],
    top_k: int | None,
    data: tuple[str, ...],
    limit: int | None,
    resume: bool,
    overwrite: bool,
    fail_fast: bool,
    strict_infra: bool,
    max_steps_per_example: int | None,
    max_prompt_chars_per_example: int | None,
    max_cost: float | None,
    retriever: str | None,
    retriever_arg: tuple[str, ...],
    reranker: str | None,
    reranker_arg: tuple[str, ...],
    refiner: str | None,
    refiner_arg: tuple[str, ...],
    role_model: tuple[str, ...],
    role_model_arg: tuple[str, ...],
    **common: Any,
) -> dict[str, Any]:
    """RunConfig fields from the run options (ConfigError on a malformed one). The tasks of --include-path
    folders are named by their files, so the run's config says which files it ran."""
    from ..._yaml_tasks.discovery import include

    names = split_names(tasks)
    return {
        "tasks": include(names, include_path) if include_path else names,
        "system": system,
        "system_args": parse_assignments(system_arg, "--system-arg"),
        "top_k": top_k,
        "data": data_paths(data),
        "limit": limit,
        "resume": resume,
        "overwrite": overwrite,
        "fail_fast": fail_fast,
        "strict_infra": strict_infra,
        "max_steps_per_example": max_steps_per_example,
        "max_prompt_chars_per_example": max_prompt_chars_per_example,
        "max_cost": max_cost,
        "retriever": retriever,
        "retriever_args": parse_assignments(retriever_arg, "--retriever-arg"),
        "reranker": reranker,
        "reranker_args": parse_assignments(reranker_arg, "--reranker-arg"),
        "refiner": refiner,
        "refiner_args": parse_assignments(refiner_arg, "--refiner-arg"),
        **_role_models(role_model, role_model_arg),
        **common_kwargs(**common),
    }

"""The groups of a run's options, each a frozen value read by the part of the run that uses it: what it runs
(planning), its models (the engines), its retrieval, its judging (metrics and judges), where it writes (the run
folder) and what it may take (limits). Each option is declared once, on its field (ragbench._values.run_option:
its flag, help, identity and the commands that offer it); a group with checks of its own options has
`problems()`, the pre-flight's (ragbench._run.plan.preflight)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass
from pathlib import Path
from typing import Any

from .ceiling import MAX_PROMPT_CHARS, MAX_STEPS
from .option_bounds import MAX_INFLIGHT, MAX_JUDGE_REPEATS, number_problem, too_many
from .run_option import Flag, Offers, option, pairs

# a flag `score` and `reproduce` offer as the run words it
_SCORED: Offers = {"score": {}, "reproduce": {}}
_RUN_DEFAULT: Mapping[str, Any] = {"default": None, "show_default": False, "help": "(default: the run's)"}


def _judge_repeats_help(default: str) -> str:
    return (
        f"judge every example K times per judge (1 to {MAX_JUDGE_REPEATS}) and report the judges' agreement "
        f"(default: {default})"
    )


@dataclass(frozen=True)
class RunWhat:
    """What planning reads: the tasks, their data and options, the system and its options, the seed."""

    tasks: list[str] = option(
        MISSING,  # every run names its tasks
        # --tasks may name the tasks of these folders: the run's tasks are their files (ragbench._cli.run.option_values)
        Flag(
            name="--include-path",
            metavar="DIR",
            help="a folder of YAML tasks: --tasks may name any task (or group) declared by a *.yaml file under it "
            "(repeatable)",
            offers={
                "rescore": {
                    "help": "a folder holding the run's YAML task files, if they moved (default: where the run read "
                    "them; a file changed since is refused)"
                }
            },
        ),
        names=True,
        help="comma-separated task or group names (ragbench list tasks), or YAML task files (docs/yaml-tasks.md)",
    )
    data: dict[str, str] = pairs(  # task (or task file) -> data file
        "--data", "TASK=PATH", "local data file for a task", offers={"reproduce": {}}
    )
    task_args: dict[str, Any] = pairs(  # "key" for every task, "task.key" for one
        "--task-arg", "K=V", "task option; TASK.K=V for one task", offers=_SCORED
    )
    limit: int | None = option(
        None,
        help="first N records of each task",
        offers={"reproduce": {"help": "first N records per task: a PARTIAL reproduction"}},
    )
    system: str = option("vanilla", show_default=True, help="system name (ragbench list systems)")
    system_args: dict[str, Any] = pairs(
        "--system-arg",
        "K=V",
        "system option, e.g. top_n=5",
        offers={"reproduce": {"help": "system option (changes what is measured)"}},
    )
    top_k: int | None = option(  # given to the system's declared option
        None,
        at_least=1,
        metavar="N",
        help="passages shown per reader call, set through the option the system declares for it (a system that "
        "declares none refuses it); applies to the run's one system",
        identity="when_given",
    )
    # numbers are ranged by the pre-flight (`problems()`), one line each
    seed: int = option(0, show_default=True, help="seeds sampling and the bootstrap (>= 0)", offers=_SCORED)
    replay_tools: str | None = option(None, identity="never")  # a recorded run's calls/: tools answer from it

    def problems(self) -> list[str]:
        every = ", or leave it out for all records"
        limit = None if self.limit is None else number_problem("--limit", self.limit, 1, every)
        return _found(number_problem("--seed", self.seed, 0), limit)


@dataclass(frozen=True)
class RunModels:
    """The models a run's system calls (the engines load them): its model and that model's engine options, and a
    model of its own for some of the system's roles. Its engines are checked with the registry
    (ragbench._run.plan.engine_checks.check_engines)."""

    model: str | None = option(  # None: the embedded default
        None,
        help="engine:model, e.g. hf:Qwen/Qwen2.5-0.5B-Instruct, vllm:/models/llama, openai:gpt-4o-mini, "
        "replay:calls.jsonl (default: embedded SmolLM2)",
        offers=_SCORED,
    )
    model_args: dict[str, Any] = pairs(
        "--model-arg",
        "K=V",
        "engine option (batch_size, dtype, base_url ...)",
        # the model's base_url option, repeatable: one URL or a list (ragbench._cli.run.option_values)
        Flag(
            name="--base-url",
            help="OpenAI-compatible server URL (default: $OPENAI_BASE_URL); repeat it for several servers of one "
            "model (least-loaded dispatch)",
            offers=_SCORED,
        ),
        offers=_SCORED,
    )
    role_models: dict[str, str] = pairs(  # a system's role -> engine:model
        "--role-model",
        "ROLE=MODEL",
        "engine:model for one role of the system (e.g. smart's reconstructor, locator, generator); other roles "
        "use --model",
        offers={"reproduce": {"help": "engine:model for one role of the row's system (changes what is measured)"}},
    )
    role_model_args: dict[str, dict[str, Any]] = pairs(  # role -> engine options
        "--role-model-arg",
        "ROLE.K=V",
        "engine option of a --role-model, e.g. locator.gpu_memory_utilization=0.3",
    )


def _component_args(name: str, example: str, identity: str = "when_given", reproduce: str = "") -> Any:
    """A retrieval component's --NAME-arg (`reproduce`: reproduce's wording of it)."""
    return pairs(
        f"--{name}-arg",
        "K=V",
        f"{name} option, e.g. {example}",
        identity=identity,
        offers={"reproduce": {"help": reproduce} if reproduce else {}},
    )


@dataclass(frozen=True)
class RunRetrieval:
    """What a run's system searches with: the retriever, the reranker and the refiner, each with its options, and
    the cache of parsed pages. Its components are checked with the registry
    (ragbench._components.check_components)."""

    retriever: str | None = option(  # ctx.retriever of systems; None: the examples' provided docs
        None, help="retriever for ctx.retriever (ragbench list retrievers; default: provided)"
    )
    retriever_args: dict[str, Any] = _component_args(
        "retriever",
        "index=DIR",
        "always",
        reproduce="option of the row's retriever: its folders (index=DIR, a row's retriever_paths) are no "
        "substitution, its other options are",
    )
    shipped_corpus_index: bool = option(False, identity="never")  # retriever_args' index is the index cache's own
    reranker: str | None = option(  # reorders every search's results (ragbench._components)
        None, help="reranks every search's results (ragbench list rerankers)", identity="when_given"
    )
    reranker_args: dict[str, Any] = _component_args(
        "reranker", "model=DIR", reproduce="option of the row's reranker, e.g. model=DIR"
    )
    refiner: str | None = option(  # turns a reader's documents into what it shows
        None, help="refines the documents a reader shows (ragbench list refiners)", identity="when_given"
    )
    refiner_args: dict[str, Any] = _component_args(
        "refiner", "model=DIR", reproduce="option of the row's refiner, e.g. model=DIR"
    )
    page_cache: str | None = option(  # parsed pages and embeddings (ragbench._storage.page_cache); "off" disables it
        None,
        metavar="PATH|off",
        help="cache of parsed pages and their embeddings, shared by runs (default: $RAGBENCH_PAGE_CACHE or "
        "~/.cache/ragbench/pages.sqlite)",
        identity="never",
        offers=_SCORED,
    )


@dataclass(frozen=True)
class RunJudging:
    """How a run scores: its metrics and their options, the judge and NLI models, human labels and judge prices,
    the bootstrap's resamples."""

    metrics: list[str] = option(  # NAME replaces the tasks' lists, +NAME adds
        None,
        factory=list,
        names=True,
        metavar="NAME[,NAME]",
        help="metrics of every task: NAME,... replaces the tasks' own, +NAME adds to them, TASK:NAME / TASK:+NAME "
        "for one task (ragbench list metrics)",
        offers={
            **_SCORED,
            "rescore": {
                "help": "NAME,... replaces the run's metrics, +NAME adds to them, TASK:NAME / TASK:+NAME for one task "
                "(default: the run's)"
            },
        },
    )
    metric_args: dict[str, Any] = pairs(  # "metric.key" -> value
        "--metric-arg",
        "METRIC.K=V",
        "metric option, e.g. mauve.featurizer=PATH",
        offers={
            **_SCORED,
            "rescore": {"help": "metric option, added to the run's; METRIC.key_prefix=P renames a metric's keys"},
        },
    )
    judges: list[str] = option(
        None,
        factory=list,
        name="--judge",
        metavar="MODEL",
        help="judge engine:model for LLM-judge metrics (repeatable)",
        offers={**_SCORED, "rescore": {"help": "judge engine:model (repeatable; default: the run's)"}},
    )
    judge_args: dict[str, dict[str, Any]] = pairs(  # judge index -> engine options
        "--judge-arg",
        "N.K=V",
        "engine option of the N-th --judge (from 0), e.g. 1.base_url=http://127.0.0.1:8001/v1",
        offers={**_SCORED, "rescore": {"help": "engine option of the N-th --judge (from 0)"}},
    )
    judge_repeats: int | None = option(  # each judged metric scored so often per judge (None: once)
        None,
        at_least=1,
        bounded=True,  # a run makes its raters for every judged example
        metavar="K",
        help=_judge_repeats_help("once"),
        identity="when_given",
        offers={**_SCORED, "rescore": {"help": _judge_repeats_help("the run's")}},
    )
    nli: str | None = option(  # engine:model of the entailment judge for metrics that need "nli"
        None,
        metavar="MODEL",
        help="NLI engine:model for citation/claim metrics, e.g. hf:google/t5_xxl_true_nli_mixture or "
        "replay:nli_calls.jsonl",
        offers={**_SCORED, "rescore": {"help": "NLI engine:model (default: the run's)"}},
    )
    nli_format: str = option(  # request format, see ragbench._nli
        "true",
        show_default=True,
        choices=("true", "prompt"),
        help="true: TRUE/ALCE 'premise: .. hypothesis: ..' -> '1'; prompt: LLM-as-NLI chat prompt",
        offers={**_SCORED, "rescore": {**_RUN_DEFAULT, "after": "--nli-arg"}},
    )
    nli_args: dict[str, Any] = pairs(  # engine options of the NLI engine
        "--nli-arg",
        "K=V",
        "NLI engine option (batch_size, dtype ...)",
        offers={**_SCORED, "rescore": {"help": "NLI engine option"}},
    )
    human_labels: str | None = option(  # read by ragbench._reports.judging.human_labels
        None,
        metavar="FILE",
        help="human labels of judged keys (JSONL or CSV: id, metric, label[, task]): results.json checks the judges "
        "against them and gives the prediction-powered interval (docs/metrics.md)",
        # what results.json checks the judges against: the predictions and scores do not change
        identity="never",
        offers={**_SCORED, "rescore": {}},
    )
    price_table: str | None = option(  # judge prices (ragbench._cost.call_cost)
        None,
        metavar="FILE",
        help="judge prices, USD per million tokens (YAML/JSON: MODEL: {prompt: X, completion: Y}), over the "
        "built-in OpenAI prices (docs/metrics.md)",
        identity="never",  # what results.json prices the judges at
        offers={**_SCORED, "rescore": {}},
    )
    bootstrap_iters: int = option(
        1000,
        show_default=True,
        help="bootstrap resamples of the 95% intervals (0: no intervals)",
        offers={**_SCORED, "rescore": {**_RUN_DEFAULT, "at_least": 0}},
    )

    def problems(self) -> list[str]:
        return _found(
            number_problem("--bootstrap-iters", self.bootstrap_iters, 0, " (0: no intervals)"),
            too_many("--bootstrap-iters", "bootstrap_iters", self.bootstrap_iters),
            too_many("--judge-repeats", "judge_repeats", self.judge_repeats),
        )


@dataclass(frozen=True)
class RunOutput:
    """Where a run writes and how: its folder (a new run, a resumed one, a replaced one), its response cache, its
    progress bar. None of them changes results: none is part of the run's identity."""

    output: str | None = option(
        None,
        help="run folder (default: runs/<system>__<model>__<config hash>)",
        identity="never",
        offers={
            **_SCORED,
            "rescore": {"help": "folder of the rescored run (default: RUN__rescored; RUN is not changed)"},
        },
    )
    resume: bool = option(
        False,
        help="continue the run in the output folder (failed examples are tried again)",
        identity="never",
        offers=_SCORED,
    )
    overwrite: bool = option(  # replace an earlier run in the output folder
        False, help="replace the run in the output folder", identity="never", offers={**_SCORED, "rescore": {}}
    )
    cache: str | None = option(
        None,
        help="SQLite response cache (default: in the run folder)",
        identity="never",
        offers={
            **_SCORED,
            "rescore": {
                "help": "SQLite response cache of the judge and NLI calls (default: in the output folder; a copy of "
                "RUN/cache.sqlite answers the calls RUN made, and RUN stays unchanged)"
            },
        },
    )
    progress: bool = option(
        True,
        help="no progress bar (examples done of the run's, ETA)",
        identity="never",
        offers={**_SCORED, "rescore": {}},
    )

    def problems(self) -> list[str]:
        folder = self.cache is not None and Path(self.cache).is_dir()
        return [f"--cache {self.cache}: a folder is there; give a file path for the SQLite cache"] if folder else []


@dataclass(frozen=True)
class RunLimits:
    """How much of the machine and the budget a run may take, and what it does with a failure."""

    max_inflight: int | None = option(  # examples running at once; None: examples_in_flight's choice
        None,
        help=f"examples running at once, at most {MAX_INFLIGHT:,} (default: the model engine's batch size or "
        "concurrency, at least 64 and at most 256)",
        identity="never",
        offers={
            **_SCORED,
            "rescore": {
                "at_least": 1,
                "help": f"examples scored at once, at most {MAX_INFLIGHT:,} (default: the run's)",
            },
        },
    )
    # each example's ceiling (ragbench._values.ceiling; None: its default): past it, the example fails; not part
    # of the identity: it ends only an example that would not end, and --resume may lift it to try such examples again
    max_steps_per_example: int | None = option(  # model calls, searches, tool and recorded steps
        None,
        metavar="N",
        help=f"each example's ceiling of steps (model calls, searches, tool and recorded steps; default "
        f"{MAX_STEPS:,}): an example that reaches it fails as CeilingReached and the run goes on",
        identity="never",
    )
    max_prompt_chars_per_example: int | None = option(  # characters of the prompts it sends
        None,
        metavar="N",
        help=f"each example's ceiling of characters of prompts sent, summed over its model calls (default "
        f"{MAX_PROMPT_CHARS:,}): an example that reaches it fails as CeilingReached",
        identity="never",
    )
    max_cost: float | None = option(  # this command's calls stop short (ragbench._cost.spending_cap)
        None,
        metavar="DOLLARS",
        help="stop the run before its LLM calls (system model and judges, priced as results.json prices them) would "
        "cost more than this, each batch checked at its worst first; --resume continues",
        identity="never",  # what this command may spend: --resume may give another
    )
    fail_fast: bool = option(  # stop at the first record that fails (StoppedAtFailure), its traceback shown
        False,
        help="stop at the first failed example or bad record and print its traceback (for developing a plugin; "
        "--resume continues the run)",
        identity="never",
    )
    strict_infra: bool = option(  # a failed judge/tool call folded into a result fails its example instead
        False,
        help="fail an example when a judge/tool/retrieval call failed and was folded into its result (upstream's "
        "behaviour, counted, is the default)",
    )

    def problems(self) -> list[str]:
        ceiling = ", or leave it out for the default ceiling"
        return _found(
            None if self.max_inflight is None else number_problem("--max-inflight", self.max_inflight, 1),
            too_many("--max-inflight", "max_inflight", self.max_inflight),
            *(
                number_problem(flag, value, 1, ceiling)
                for flag, value in (
                    ("--max-steps-per-example", self.max_steps_per_example),
                    ("--max-prompt-chars-per-example", self.max_prompt_chars_per_example),
                )
                if value is not None
            ),
        )


def _found(*problems: str | None) -> list[str]:
    return [problem for problem in problems if problem is not None]

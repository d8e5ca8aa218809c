"""What a run is asked to do (`RunConfig`), the parts of it a stage reads (`PlanRequest`, `EngineRequest`), and its
identity (the hash that names its folder)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .names import checked_name, inside
from .urls import redacted

# Options that do not change results: left out of the run's identity.
_NOT_IDENTITY = (
    "output",
    "resume",
    "overwrite",
    "max_inflight",
    "cache",
    "page_cache",
    "progress",
    "replay_tools",
    "fail_fast",
    "shipped_corpus_index",
    # ends only an example that would not end: --resume may lift it to try such examples again
    "max_steps_per_example",
    "max_prompt_chars_per_example",
    # what results.json checks the judges against and prices them at; the predictions and scores do not change
    "human_labels",
    "price_table",
    "max_cost",  # what this command may spend: --resume may give another
)

# Options in the identity only when given: a run without them keeps the identity (and folder) it had
# before they existed.
_IDENTITY_WHEN_GIVEN = ("reranker", "reranker_args", "refiner", "refiner_args", "top_k", "judge_repeats")


MAX_BOOTSTRAP_ITERATIONS = 1_000_000  # rounds of a bootstrap (their statistics are kept: 8 MB), checked before a run
MAX_JUDGE_REPEATS = 100  # scorings of a judged example per judge (--judge-repeats), checked as the option is read
MAX_INFLIGHT = 10_000  # examples at once (--max-inflight): a worker each, started with the run

# What each of these bounds, and why it is enough
_AT_MOST = {
    "bootstrap_iters": (MAX_BOOTSTRAP_ITERATIONS, f"rounds (a p-value's resolution of 1/{MAX_BOOTSTRAP_ITERATIONS:,})"),
    "judge_repeats": (
        MAX_JUDGE_REPEATS,
        "scorings per judge (each is one more judge call per judged example; a judge's agreement with itself is "
        "measured with a few, 3 to 10)",
    ),
    "max_inflight": (
        MAX_INFLIGHT,
        "examples at once (each holds a worker and its example's data; a model server answers far fewer at once)",
    ),
}


def too_many(flag: str, field: str, value: int | None) -> str | None:
    """One line for a count over its bound (`field`: bootstrap_iters, judge_repeats or max_inflight), else None:
    checked before a run (or a comparison) starts what it would make that many of."""
    most, what = _AT_MOST[field]
    if isinstance(value, int) and value > most:
        return f"{flag} {value}: at most {most:,} {what}; give fewer"
    return None


DEFAULT_INFLIGHT = 64
MAX_DEFAULT_INFLIGHT = 256


def examples_in_flight(given: int | None, engine: Any = None) -> int:
    """`--max-inflight`, or by default enough examples for the model engine to fill one batch (or use
    its concurrency) when each has one call waiting: a closed-book run of 64 in flight fed an `hf` engine
    whose `batch_size=auto` was 256 batches of 64, a fraction of the tokens per second of full batches (docs/
    performance.md, "Figures behind the code"). At least 64; at most 256, since each example in flight holds
    its data (a CRAG Task 3 example: 50 web pages)."""
    if given is not None:
        return given
    if engine is None:
        return DEFAULT_INFLIGHT
    capacity: int = max(engine.max_batch_size, engine.max_concurrency if engine.concurrent else 0)
    return max(DEFAULT_INFLIGHT, min(capacity, MAX_DEFAULT_INFLIGHT))


def index_by_key(retriever_args: dict[str, Any], shipped_corpus_index: bool) -> dict[str, Any]:
    """`retriever_args` with the index cache's index of a task's own corpus named by its key (its folder's name:
    kind and corpus sha256) rather than by where the cache is."""
    if not shipped_corpus_index or not isinstance(retriever_args.get("index"), str):
        return retriever_args
    return {**retriever_args, "index": Path(retriever_args["index"]).name}


@dataclass(frozen=True)
class PlanRequest:
    """What planning reads of a run (ragbench._run.plan.planning): its tasks and their options, its system and the
    options it is given, its metrics and their options, and which judge and NLI models the metrics may call."""

    tasks: tuple[str, ...]
    data: Mapping[str, str]  # task (or task file) -> data file (--data)
    task_args: Mapping[str, Any]  # "key" for every task, "task.key" for one
    tools_replayed: bool  # tools answer from a recorded run (--replay)
    system: str
    system_args: Mapping[str, Any]
    top_k: int | None
    roles: tuple[str, ...]  # the system's roles given a model of their own (--role-model)
    metrics: tuple[str, ...]  # --metrics: NAME replaces the tasks' lists, +NAME adds
    metric_args: Mapping[str, Any]  # "metric.key" -> value
    judges: tuple[str, ...]
    judge_repeats: int | None
    nli: str | None
    nli_format: str


@dataclass(frozen=True)
class EngineRequest:
    """The engines a run names, each with its options: what the pre-flight checks and the run then loads
    (ragbench._run.plan.preflight.check_engines, ragbench._run.models.run_engines.load_engines)."""

    model: str | None  # None: the embedded default
    model_args: Mapping[str, Any]
    role_models: Mapping[str, str]  # a system's role -> engine:model
    role_model_args: Mapping[str, Mapping[str, Any]]
    judges: tuple[str, ...]
    judge_args: Mapping[str, Mapping[str, Any]]  # judge index ("0", "1" ...) -> engine options
    judge_repeats: int | None
    nli: str | None
    nli_args: Mapping[str, Any]


@dataclass(frozen=True)
class RunConfig:
    """What a run is asked to do, as its command line (or ragbench.testing's keywords) gave it; a changed run is a
    new one (`dataclasses.replace`)."""

    tasks: list[str]
    system: str = "vanilla"
    model: str | None = None
    model_args: dict[str, Any] = field(default_factory=dict)
    role_models: dict[str, str] = field(default_factory=dict)  # a system's role -> engine:model (--role-model)
    role_model_args: dict[str, dict[str, Any]] = field(default_factory=dict)  # role -> engine options
    judges: list[str] = field(default_factory=list)
    judge_args: dict[str, dict[str, Any]] = field(default_factory=dict)  # judge index -> engine options
    judge_repeats: int | None = None  # --judge-repeats: each judged metric scored so often per judge (None: once)
    nli: str | None = None  # engine:model of the entailment judge for metrics that need "nli"
    nli_format: str = "true"  # request format, see ragbench._nli
    nli_args: dict[str, Any] = field(default_factory=dict)  # engine options of the NLI engine
    metric_args: dict[str, Any] = field(default_factory=dict)  # "metric.key" -> value
    metrics: list[str] = field(default_factory=list)  # --metrics: NAME replaces the tasks' lists, +NAME adds
    system_args: dict[str, Any] = field(default_factory=dict)
    top_k: int | None = None  # --top-k: passages shown per reader call, given to the system's declared option
    retriever: str | None = None  # ctx.retriever of systems; None: the examples' provided docs
    retriever_args: dict[str, Any] = field(default_factory=dict)
    shipped_corpus_index: bool = False  # retriever_args' index is the index cache's of a task's own corpus
    reranker: str | None = None  # reorders every search's results (--reranker; ragbench._components)
    reranker_args: dict[str, Any] = field(default_factory=dict)
    refiner: str | None = None  # turns a reader's documents into what it shows (--refiner)
    refiner_args: dict[str, Any] = field(default_factory=dict)
    task_args: dict[str, Any] = field(default_factory=dict)  # "key" for every task, "task.key" for one
    data: dict[str, str] = field(default_factory=dict)
    limit: int | None = None
    seed: int = 0
    bootstrap_iters: int = 1000
    output: str | None = None
    resume: bool = False
    overwrite: bool = False  # replace an earlier run in the output folder
    strict_infra: bool = False  # a failed judge/tool call folded into a result fails its example instead
    fail_fast: bool = False  # stop at the first record that fails (StoppedAtFailure), its traceback shown
    max_inflight: int | None = None  # examples running at once; None: examples_in_flight's choice
    # each example's ceiling (ragbench._values.ceiling; None: its default): past it, the example fails
    max_steps_per_example: int | None = None  # model calls, searches, tool and recorded steps
    max_prompt_chars_per_example: int | None = None  # characters of the prompts it sends
    cache: str | None = None
    page_cache: str | None = None  # parsed pages and embeddings (ragbench._storage.page_cache); "off" disables it
    progress: bool = True
    replay_tools: str | None = None  # a recorded run's calls/ folder: tools answer from it (--replay)
    human_labels: str | None = None  # --human-labels FILE (ragbench._reports.judging.human_labels)
    price_table: str | None = None  # --price-table FILE: judge prices (ragbench._reports.cost.judge_cost)
    max_cost: float | None = None  # --max-cost DOLLARS: this command's calls stop short (ragbench._cost.spending_cap)

    def plan_request(self) -> PlanRequest:
        return PlanRequest(
            tasks=tuple(self.tasks),
            data=dict(self.data),
            task_args=dict(self.task_args),
            tools_replayed=self.replay_tools is not None,
            system=self.system,
            system_args=dict(self.system_args),
            top_k=self.top_k,
            roles=tuple(self.role_models),
            metrics=tuple(self.metrics),
            metric_args=dict(self.metric_args),
            judges=tuple(self.judges),
            judge_repeats=self.judge_repeats,
            nli=self.nli,
            nli_format=self.nli_format,
        )

    def engine_request(self) -> EngineRequest:
        return EngineRequest(
            model=self.model,
            model_args=dict(self.model_args),
            role_models=dict(self.role_models),
            role_model_args=dict(self.role_model_args),
            judges=tuple(self.judges),
            judge_args=dict(self.judge_args),
            judge_repeats=self.judge_repeats,
            nli=self.nli,
            nli_args=dict(self.nli_args),
        )

    def identity(self) -> dict[str, Any]:
        """What names the run (its folder's hash) and what a --resume must repeat, as run.json records it: the
        credentials of a URL among the options redacted (a changed key is the same run). The index cache's
        index of a task's own corpus is named by its key (its kind and the corpus's sha256), not where the
        cache is: a cache moved ($RAGBENCH_INDEX_CACHE) or another machine's is the same run."""
        identity = {
            k: v
            for k, v in asdict(self).items()
            if k not in _NOT_IDENTITY and not (k in _IDENTITY_WHEN_GIVEN and not v)
        }
        identity["retriever_args"] = index_by_key(self.retriever_args, self.shipped_corpus_index)
        recorded: dict[str, Any] = redacted(identity)  # a dict stays one
        return recorded

    def config_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True, default=str).encode()).hexdigest()[:10]

    def run_dir(self) -> Path:
        if self.output:
            return Path(self.output)
        model = re.sub(r"[^A-Za-z0-9._-]+", "-", self.model or "embedded").strip("-")[-40:]
        system = checked_name(
            self.system, "--system", "the command line", "`ragbench list systems` shows the installed ones"
        )
        return inside("runs", f"{system}__{model}__{self.config_hash()}")  # `model`: letters, digits, `._-`

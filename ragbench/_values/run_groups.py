"""The groups of a run's options, each a frozen value read by the part of the run that uses it: what it runs
(planning), its models (the engines), its retrieval, its judging (metrics and judges), where it writes (the run
folder) and what it may take (limits). Their command-line options are declared by ragbench._cli.run.groups; each
group's `problems()` are the pre-flight's checks of its own options (ragbench._run.plan.preflight)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .option_bounds import number_problem, too_many


@dataclass(frozen=True)
class RunWhat:
    """What planning reads: the tasks, their data and options, the system and its options, the seed."""

    tasks: list[str]
    system: str = "vanilla"
    system_args: dict[str, Any] = field(default_factory=dict)
    top_k: int | None = None  # --top-k: passages shown per reader call, given to the system's declared option
    task_args: dict[str, Any] = field(default_factory=dict)  # "key" for every task, "task.key" for one
    data: dict[str, str] = field(default_factory=dict)  # task (or task file) -> data file (--data)
    limit: int | None = None
    seed: int = 0
    replay_tools: str | None = None  # a recorded run's calls/ folder: tools answer from it (--replay)

    def problems(self) -> list[str]:
        every = ", or leave it out for all records"
        limit = None if self.limit is None else number_problem("--limit", self.limit, 1, every)
        return _found(number_problem("--seed", self.seed, 0), limit)


@dataclass(frozen=True)
class RunModels:
    """The models a run's system calls (the engines load them): its model and that model's engine options, and a
    model of its own for some of the system's roles."""

    model: str | None = None  # None: the embedded default
    model_args: dict[str, Any] = field(default_factory=dict)
    role_models: dict[str, str] = field(default_factory=dict)  # a system's role -> engine:model (--role-model)
    role_model_args: dict[str, dict[str, Any]] = field(default_factory=dict)  # role -> engine options

    def problems(self) -> list[str]:
        """None of its own: its engines are checked with the registry (ragbench._run.plan.preflight.check_engines)."""
        return []


@dataclass(frozen=True)
class RunRetrieval:
    """What a run's system searches with: the retriever, the reranker and the refiner, each with its options, and
    the cache of parsed pages."""

    retriever: str | None = None  # ctx.retriever of systems; None: the examples' provided docs
    retriever_args: dict[str, Any] = field(default_factory=dict)
    shipped_corpus_index: bool = False  # retriever_args' index is the index cache's of a task's own corpus
    reranker: str | None = None  # reorders every search's results (--reranker; ragbench._components)
    reranker_args: dict[str, Any] = field(default_factory=dict)
    refiner: str | None = None  # turns a reader's documents into what it shows (--refiner)
    refiner_args: dict[str, Any] = field(default_factory=dict)
    page_cache: str | None = None  # parsed pages and embeddings (ragbench._storage.page_cache); "off" disables it

    def problems(self) -> list[str]:
        """None of its own: its components are checked with the registry (ragbench._components.check_components)."""
        return []


@dataclass(frozen=True)
class RunJudging:
    """How a run scores: its metrics and their options, the judge and NLI models, human labels and judge prices,
    the bootstrap's resamples."""

    judges: list[str] = field(default_factory=list)
    judge_args: dict[str, dict[str, Any]] = field(default_factory=dict)  # judge index -> engine options
    judge_repeats: int | None = None  # --judge-repeats: each judged metric scored so often per judge (None: once)
    nli: str | None = None  # engine:model of the entailment judge for metrics that need "nli"
    nli_format: str = "true"  # request format, see ragbench._nli
    nli_args: dict[str, Any] = field(default_factory=dict)  # engine options of the NLI engine
    metric_args: dict[str, Any] = field(default_factory=dict)  # "metric.key" -> value
    metrics: list[str] = field(default_factory=list)  # --metrics: NAME replaces the tasks' lists, +NAME adds
    bootstrap_iters: int = 1000
    human_labels: str | None = None  # --human-labels FILE (ragbench._reports.judging.human_labels)
    price_table: str | None = None  # --price-table FILE: judge prices (ragbench._reports.cost.judge_cost)

    def problems(self) -> list[str]:
        return _found(
            number_problem("--bootstrap-iters", self.bootstrap_iters, 0, " (0: no intervals)"),
            too_many("--bootstrap-iters", "bootstrap_iters", self.bootstrap_iters),
            too_many("--judge-repeats", "judge_repeats", self.judge_repeats),
        )


@dataclass(frozen=True)
class RunOutput:
    """Where a run writes and how: its folder (a new run, a resumed one, a replaced one), its response cache, its
    progress bar."""

    output: str | None = None
    resume: bool = False
    overwrite: bool = False  # replace an earlier run in the output folder
    cache: str | None = None
    progress: bool = True

    def problems(self) -> list[str]:
        folder = self.cache is not None and Path(self.cache).is_dir()
        return [f"--cache {self.cache}: a folder is there; give a file path for the SQLite cache"] if folder else []


@dataclass(frozen=True)
class RunLimits:
    """How much of the machine and the budget a run may take, and what it does with a failure."""

    strict_infra: bool = False  # a failed judge/tool call folded into a result fails its example instead
    fail_fast: bool = False  # stop at the first record that fails (StoppedAtFailure), its traceback shown
    max_inflight: int | None = None  # examples running at once; None: examples_in_flight's choice
    # each example's ceiling (ragbench._values.ceiling; None: its default): past it, the example fails
    max_steps_per_example: int | None = None  # model calls, searches, tool and recorded steps
    max_prompt_chars_per_example: int | None = None  # characters of the prompts it sends
    max_cost: float | None = None  # --max-cost DOLLARS: this command's calls stop short (ragbench._cost.spending_cap)

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

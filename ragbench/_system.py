"""Base class of system plugins: one example at a time, as async code that reads like the paper."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypedDict, runtime_checkable

from ._class_defaults import EMPTY, RefusesDeclaredByName, frozen

BUDGETS = ("passages", "searches")  # the budgets a system may declare options for (`SystemDeclaration.budget_options`)

if TYPE_CHECKING:
    from ._checks import Preflight
    from ._context import Context
    from ._engines.base import Engine
    from ._records import SampleRecord
    from ._replay.recording import CallRecorder
    from ._task import Task
    from ._types import Example, Prediction, Step
    from ._values.engine_needs import EngineNeeds
    from ._values.json_values import JsonObject


@dataclass(frozen=True)
class OutputFormat:
    """An output format a system parses, counted from what each example recorded (`RecordedExtras`): `followed`
    and `of` are, per example, the outputs that followed `format` and the outputs checked, each a key of the
    example's record (its value a bool or a count) or a function of the record; `of` None: one output an
    example. `fix`: what the warning a shortfall gives tells the user to do."""

    format: str
    followed: str | Callable[[Any], int]
    fix: str
    of: str | Callable[[Any], int] | None = None

    def checks(self, runs: list[Any]) -> list[FormatCheck] | None:
        """The `format_adherence` of `runs` (the examples' records): one `FormatCheck`, None with none checked."""
        of = len(runs) if self.of is None else sum(figure_of(self.of, run) for run in runs)
        return adherence(self.format, sum(figure_of(self.followed, run) for run in runs), of, self.fix)


def figure_of(value: str | Callable[[Any], Any], run: Any) -> Any:
    """One example's value of a declared figure: its record's `value` key, or `value` of the record."""
    return run[value] if isinstance(value, str) else value(run)


@dataclass(frozen=True)
class RecordedExtras:
    """What a system records of each example under `Prediction.extras[key]`, and what its reporting hooks say of
    it, declared (`SystemDeclaration.recorded`): `statistics` gives the examples that recorded it, then for each
    figure of `means` the mean over them of its key (or of a function of the record), 3 decimals, of `counts` the
    sum of its key (a bool or a count), of `tallies` how many examples recorded each value of its key (by value),
    last what `figures` gives of their records (figures of another shape: rounded otherwise, over some of them,
    present only where recorded); `format_adherence` counts `output_format`."""

    key: str
    means: Mapping[str, str | Callable[[Any], float]] = field(default_factory=lambda: EMPTY)
    counts: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    tallies: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    output_format: OutputFormat | None = None
    figures: Callable[[list[Any]], JsonObject] | None = None

    def __post_init__(self) -> None:
        for name in ("means", "counts", "tallies"):
            object.__setattr__(self, name, frozen(getattr(self, name)))

    def statistics(self, samples: list[SampleRecord]) -> JsonObject | None:
        return self.statistics_of(recorded_extras(samples, self.key))

    def statistics_of(self, runs: list[Any]) -> JsonObject | None:
        """`statistics` of the samples' recorded extras (`recorded_extras`), read already."""
        if not runs:
            return None
        return {
            "examples": len(runs),
            **{figure: round(mean(figure_of(value, run) for run in runs), 3) for figure, value in self.means.items()},
            **{figure: sum(run[key] for run in runs) for figure, key in self.counts.items()},
            **{figure: dict(sorted(Counter(run[key] for run in runs).items())) for figure, key in self.tallies.items()},
            **(self.figures(runs) if self.figures else {}),
        }

    def format_adherence(self, samples: list[SampleRecord]) -> list[FormatCheck] | None:
        output_format = self.output_format
        return None if output_format is None else output_format.checks(recorded_extras(samples, self.key))


@dataclass(frozen=True)
class SystemDeclaration:
    """What the core reads about a system, declared once: `System.declares`."""

    # True: the system shows documents it searches for through `ctx.retriever`. On a task whose examples
    # carry none (`Task.own_documents` False), a retriever that returns only an example's own documents
    # would leave it answering closed book under its name: the pre-flight refuses that run. A system whose
    # options turn retrieval off says so per instance (`self.declares = dataclasses.replace(self.declares, ...)`).
    retrieves: bool = False
    # True: the system searches with queries of its own (a generated sub-question, a rewritten query, the text
    # generated so far), not only the question. Over a retriever that gives every query the example's own
    # passages in their given order (`provided`) each of its searches returns the same passages: the
    # pre-flight warns, naming a retriever that answers such queries.
    searches_own_queries: bool = False
    # Set: on a task whose questions come with pictures (`Task.question_images`) the system searches by each one
    # (`ctx.retriever.search_image`), which needs a retriever that can (`Retriever.image_queries`): the pre-flight
    # refuses the run otherwise, naming this setting, the one that turns those searches off (a --system-arg).
    searches_by_picture: str | None = None
    # The options that set this system's retrieval budget, by budget: "passages" (documents shown per reader
    # call, what --top-k sets) and "searches" (searches or rounds allowed per example). The core reads them:
    # --top-k goes to the "passages" option (a system that declares none refuses --top-k), and run.json records
    # each budget's value (`system_budget`) so that `ragbench compare` names a difference in budget.
    budget_options: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    # Whose prompts the system sends: "task" (the task's own prompts, `ctx.task.prompting`), or the method family
    # whose templates it sends whatever the task (e.g. "flashrag"). Two runs whose prompt styles differ are not
    # compared like for like (`ragbench compare` says so beside each difference).
    prompt_style: str = "task"
    # Options whose defaults are the method's own settings (e.g. a token budget its paper or reference code
    # sets for this method): a task's declared `system_args` do not replace them; --system-arg still does.
    own_defaults: tuple[str, ...] = ()
    # Roles that may each get their own model (--role-model ROLE=ENGINE:MODEL); `ctx.model(role)` is that
    # model's LLM, or the run's --model for a role given none. Every call goes through the same scheduler.
    roles: tuple[str, ...] = ()
    uses_llm: bool = True  # False: the run loads no engine (e.g. scoring recorded outputs)
    # The option whose value bounds the LLM calls one example makes (self_ask: "max_iter"), read by the progress
    # bar for an ETA before an example ends; None: no bound known.
    calls_at_most: str | None = None
    # What the system records of each example in its prediction's extras, from which the core reports the
    # system's `statistics` and `format_adherence` (a system may write either hook itself instead).
    recorded: RecordedExtras | None = None

    def __post_init__(self) -> None:
        unknown = sorted(set(self.budget_options) - set(BUDGETS))
        if unknown:
            raise TypeError(f"budget_options names {', '.join(unknown)}: a budget is one of {', '.join(BUDGETS)}")
        object.__setattr__(self, "budget_options", frozen(self.budget_options))


class System(RefusesDeclaredByName):
    """Subclasses take their options as keyword arguments of `__init__` (from `--system-arg`) and say what
    the core reads about them in `declares`. Optional reporting hooks (docs/writing-plugins.md): `report`,
    `statistics`, `format_adherence` (without them, the core reports what `declares.recorded` says), `trace_outline`."""

    name: ClassVar[str] = ""
    declares: SystemDeclaration = SystemDeclaration()

    async def run(self, example: Example, ctx: Context) -> Prediction:
        """The prediction for one example. `example` is read-only (the metrics score against it); the documents
        `ctx.retriever.search` returns are this call's own (docs/writing-plugins.md, "What a plugin may change")."""
        raise NotImplementedError

    def check(self, task: Task) -> None:
        """Raise `ConfigError` (one line: why, and what to use instead) when this system cannot run
        on `task` at all; called for every task before the run starts, so a configuration problem
        never shows up as example-by-example failures."""

    def preflight(self, check: Preflight, task: Task) -> None:
        """This system's pre-flight on `task` (before anything loads); default: `check`. Report
        problems with `check.problem(...)` or a `ConfigError` inside `with check.step(...)`."""
        with check.step(f"system {self.name or type(self).__name__} on task {task.name}"):
            self.check(task)

    def engine_needs(self, task: Task) -> EngineNeeds | None:
        """What this system needs of its engine on `task` (log-prob windows, vocabulary entries), declared
        before any engine starts: the engine loader sets the engine up for it and the pre-flight reports
        what cannot be given. Default: nothing beyond generation."""
        return None

    def check_model(self, engine: Engine) -> None:
        """Raise `ConfigError` when the run's model cannot serve this system at all (e.g. it lacks
        vocabulary entries the system reads log-probs of); called once the engines are loaded,
        before any example runs."""

    def config(self) -> JsonObject:
        """The system's options as recorded in results.json: its plain-valued attributes."""
        plain = (str, int, float, bool, type(None))
        return {
            key: value
            for key, value in vars(self).items()
            if not key.startswith("_")
            and (
                isinstance(value, plain)
                or (isinstance(value, dict) and all(isinstance(v, plain) for v in value.values()))
            )
        }


@dataclass(frozen=True)
class SystemRun:
    """What a run tells a system that starts something for it (`StartsForRun`): the task this instance of the system
    runs, the run folder, the examples in flight at once (`max_inflight`), whether the run continues saved work
    (`continues`: a --resume), the recorder of the run's external calls (calls/), and `charge`, which counts model
    calls the system saw made outside the run's engines (an application's own, with their tokens) against the run's
    --max-cost (None: the run has none); the calls it is given are priced by the run's price table."""

    task: str
    folder: Path | None = None
    max_inflight: int = 1
    continues: bool = False
    recorder: CallRecorder | None = None
    charge: Callable[[Sequence[Step]], None] | None = None
    replayed: Path | None = None  # `--replay`: the recorded run's calls/ the system answers from, calling nothing


@runtime_checkable
class StartsForRun(Protocol):
    """A system that starts something for the run (a server it listens on, a capture of the application's spans)
    and stops it after every example has ended, however the run ends: `start` is awaited once in the run's event
    loop before its first example, `stop` after its last (docs/writing-plugins.md)."""

    async def start(self, run: SystemRun) -> None: ...

    async def stop(self) -> None: ...


def recorded_extras(samples: list[SampleRecord], name: str) -> list[Any]:
    """`extras[name]` of every sample that ran without error and recorded it: what a system's
    `statistics` and `format_adherence` read from the task's sample records."""
    return [s.extras[name] for s in samples if s.error is None and name in s.extras]


class FormatCheck(TypedDict):
    """One output format's count in `format_adherence`: `followed` of `of` outputs followed `format`; `fix`, what
    to do about a shortfall."""

    format: str
    followed: int
    of: int
    fix: str


def adherence(what: str, followed: int, of: int, fix: str) -> list[FormatCheck] | None:
    """A `format_adherence` of one output format: `followed` of `of` outputs followed `what`; `fix`, what the
    warning a shortfall gives tells the user to do. None when no output was checked (`of` 0)."""
    return [{"format": what, "followed": followed, "of": of, "fix": fix}] if of else None


def like_for_like(system: System, task_prompts: str = "task") -> JsonObject:
    """What two runs must share to be compared like for like, as run.json records it (`like_for_like`): each
    budget `system` declares (`budget_options`) with the value it runs with, and its `prompt_style`; a system that
    sends the task's prompts ("task") sends those of the task's family (`task_prompts`: a YAML task's named
    prompt style, e.g. "flashrag": vanilla on a task in FlashRAG's style sends FlashRAG's prompts)."""
    declaration, options = system.declares, system.config()
    style = declaration.prompt_style
    return {
        **{budget: options.get(option) for budget, option in declaration.budget_options.items()},
        "prompt_style": task_prompts if style == "task" else style,
    }


def trace_outline(system: System | type[System] | None, record: SampleRecord) -> list[JsonObject]:
    """The structure of one sample's trace for the viewer's timeline: the system's own `trace_outline` hook
    (a classmethod) where it has one (it may add what only it knows to a group: {"info": {name: value},
    "chosen": True}), else the groups its steps were made in (`with ctx.group(label):`, ragbench._trace_groups)."""
    from ._trace_groups import outline

    hook = getattr(system if isinstance(system, type) else type(system), "trace_outline", None)
    return outline(record.trace) if hook is None else hook(record)

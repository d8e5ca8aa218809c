"""Base class of metric plugins: a score per example, then an aggregate per task."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, cast

from ._class_defaults import EMPTY, RefusesDeclaredByName, frozen
from ._plugin_calls import plugin_text

if TYPE_CHECKING:
    from ._checks import Preflight
    from ._context import ScoringContext
    from ._records import SampleRecord
    from ._task import Task
    from ._types import Example, Prediction
    from ._values.json_values import JsonObject

Score = float | None
Scores = dict[str, Score]


@dataclass(frozen=True)
class KeySpec:
    """What the values of one reported key mean. `higher_is_better`: the direction a reader (compare,
    --fail-if-worse, the viewer) calls better; None for a descriptive figure with no better direction
    (a length, a count of answers). `range`: (low, high), the closed interval every per-example value
    lies in (either end None: open on that side); a value outside it fails the metric on that example."""

    higher_is_better: bool | None = True
    range: tuple[float | None, float | None] | None = None

    def contains(self, value: float) -> bool:
        low, high = self.range or (None, None)
        return (low is None or value >= low) and (high is None or value <= high)


@dataclass(frozen=True)
class CorpusValue:
    """A corpus key's value as `Metric.corpus` returns it where it left out some of the samples it was
    given (those it cannot score, e.g. with a per-example value None): `n`, how many it was computed over.
    The key's entry then has that n, and the rest as not scorable (`n_none`). A plain number says it was
    computed over all of them."""

    value: float | None
    n: int


class InvalidScore(ValueError):
    """A metric returned something that is not a score (see `typed_scores`)."""


@dataclass(frozen=True)
class MetricDeclaration:
    """What the core reads about a metric, declared once: `Metric.declares`. Every key says which way is
    better and, where it has one, its range: `key_specs` per key, else `higher_is_better` and `value_range`
    for all of them."""

    keys: tuple[str, ...] = ()  # the names a dict-valued `score` reports; default (name,)
    corpus_keys: tuple[str, ...] = ()  # the names `corpus` reports
    needs: tuple[str, ...] = ()  # run components the metric calls: "nli", "judge"
    # With needs "judge": what each --judge does, in --judge order, when the judges have different jobs
    # (e.g. ("extractor", "checker")): the run takes one judge per role at most, and with fewer the last
    # judge takes the roles left (`ctx.judges_for`). Empty: any number, each asked the same (averaged).
    judge_roles: tuple[str, ...] = ()
    # Kinds of gold (Task.scoring.gold_fields; "citations" for tasks whose answers cite) the metric scores
    # against, all required; () scores any task.
    gold_needs: tuple[str, ...] = ()
    # Direction and range of every key `key_specs` leaves out (see KeySpec); `key_specs`: per key (of
    # `keys` and `corpus_keys`).
    higher_is_better: bool | None = True
    value_range: tuple[float | None, float | None] | None = None
    key_specs: Mapping[str, KeySpec] = field(default_factory=lambda: EMPTY)
    # Events a score folds in that a reader must see counted (e.g. a judge reply that did not parse,
    # scored as upstream's rule says): name -> what it means. `score` calls `ctx.count(name)` for each;
    # the run adds them up per task and shows them in the console, report.md and results.json `counted`.
    counters: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    # A metric that reads human labels shipped with the predictions (CRAG's crag_human): its own key holding
    # the label -> the judged key (another metric's, as reported) that label checks; results.json's
    # `human_agreement` compares the two (ragbench._reports.judging.human_agreement).
    human_labels_for: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    # With needs "judge": options of the judge's engine as the upstream evaluation's client had them (CRAG-MM's:
    # the OpenAI SDK's 2 retries, a reply without choices not tried again), given to each --judge whose engine
    # names the option, where --judge-arg does not (ragbench._run.models.run_engines.judge_options).
    judge_client: Mapping[str, object] = field(default_factory=lambda: EMPTY)

    def __post_init__(self) -> None:
        for name in ("key_specs", "counters", "human_labels_for", "judge_client"):
            object.__setattr__(self, name, frozen(getattr(self, name)))


class Metric(RefusesDeclaredByName):
    """`score` returns one value (reported under `name`) or a dict of named values; it may be
    async when it calls a judge or an NLI model through `ctx`. A value is a finite number (bool and
    numpy scalars are taken as floats) or None, which means "not scorable" and is counted apart from
    errors; anything else fails the metric on that example (`typed_scores`). `aggregate` is the mean
    unless the metric says otherwise. What the core reads about the metric is its `declares`.

    What `score` and `corpus` are given is read-only (the next metric reads the same): a change raises
    `ReadOnlyError` (docs/writing-plugins.md, "What a plugin may change").
    """

    name: ClassVar[str] = ""
    declares: MetricDeclaration = MetricDeclaration()
    # Set by the run from `--metric-arg NAME.key_prefix=P`: every key is reported as P + key, so two
    # metrics with a key of the same name can score one task. `score`, `aggregate` and `corpus` keep
    # seeing their own key names.
    key_prefix: str = ""

    def preflight(self, check: Preflight, task: Any) -> None:
        """The metric's own pre-flight on `task`, before anything loads (a file it reads, a service
        it calls): report with `check.problem("...; the option that fixes it")`. Default: nothing
        (whether its gold and its judge/NLI model are there is checked for every metric)."""

    def score(
        self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None
    ) -> Score | Scores | Awaitable[Score | Scores]:
        raise NotImplementedError

    def aggregate(self, key: str, values: list[float]) -> float:
        return sum(values) / len(values) if values else float("nan")

    def corpus(self, samples: list[SampleRecord], seed: int) -> Mapping[str, float | CorpusValue | None]:
        """Values of `corpus_keys` that only exist for the whole set (MAUVE, a bootstrap median),
        computed once from the scored `SampleRecord`s (question, gold, answer, scores; read without texts);
        reported without interval or slices. A value computed over fewer of them than given (the others
        not scorable) is returned as `CorpusValue(value, n)`, so that its n says so."""
        return {}

    def config(self) -> JsonObject:
        return {"name": self.name}


def fits(metric: type[Metric], task: Any) -> bool:
    """Whether `task`'s records carry the gold `metric` needs (`declares.gold_needs`; a task that does not
    declare its gold, `gold_fields` None, is given the benefit of the doubt); `task` a Task or, for a listing,
    its class."""
    if task.scoring.gold_fields is None:
        return True
    # a class: `ragbench list`, which instantiates no task
    prompting = cast("type[Task]", task).declared_prompting() if isinstance(task, type) else task.prompting
    offered = set(task.scoring.gold_fields) | ({"citations"} if prompting.cites else set())
    return set(metric.declares.gold_needs) <= offered


def score_keys(metric: Metric) -> tuple[str, ...]:
    """Per-example keys; a corpus-only metric (only `corpus_keys`) has none."""
    declaration = metric.declares
    return declaration.keys or (() if declaration.corpus_keys else (metric.name,))


def key_spec(metric: Metric, key: str) -> KeySpec:
    """The direction and range of one of the metric's own keys (not prefixed)."""
    declaration = metric.declares
    return declaration.key_specs.get(key) or KeySpec(declaration.higher_is_better, declaration.value_range)


def reported_keys(metric: Metric, corpus: bool = False) -> dict[str, str]:
    """Reported name -> own name of every per-example key (`corpus`: of every corpus key)."""
    own = metric.declares.corpus_keys if corpus else score_keys(metric)
    return {metric.key_prefix + key: key for key in own}


def typed_value(metric: Metric, key: str, value: Any) -> float | None:
    """`value` of the metric's own `key` as a score: None, or a finite float within the key's range.
    bool counts as 0/1 and numpy scalars as the number they hold; a string, a list, NaN or an
    infinity raises `InvalidScore` naming the metric, the key and what was given."""
    if value is None:
        return None
    number = finite_number(f"metric {metric.name}", key, value, " or None")
    spec = key_spec(metric, key)
    if not spec.contains(number):
        low, high = spec.range or (None, None)
        raise InvalidScore(
            f"metric {metric.name} returned {type(number).__name__} {number:g} for key '{key}', "
            f"outside its declared range [{_end(low, '-inf')}, {_end(high, 'inf')}]"
        )
    return number


def saved_value(metric: Metric, key: str, value: Any) -> tuple[float | None, bool]:
    """(value, whether it is a score) of a saved per-example value: a sample written by an older ragbench
    may hold a non-number (a numpy scalar saved as a string), counted as the metric's failure."""
    try:
        return typed_value(metric, key, value), True
    except InvalidScore:
        return None, False


def finite_number(who: str, key: str, value: Any, alternative: str = "") -> float:
    """`value` as a finite float: bool as 0/1, a numpy scalar as the number it holds; anything else (None, a
    string, NaN, an infinity, an int past the largest float) raises `InvalidScore` naming `who` returned
    it ("metric f1", "metric f1's aggregate"), the key and what it was; `alternative`: what else a score
    may be (" or None")."""
    if getattr(value, "shape", None) == () and hasattr(value, "item"):  # a numpy scalar or 0-d array
        value = value.item()
    where = f"{who} returned {type(value).__name__}"
    if not isinstance(value, (int, float)):
        raise InvalidScore(f"{where} {_shown(value)} for key '{key}': a score is a number{alternative}")
    number = float(value) if not isinstance(value, int) or abs(value) < 2**1023 else math.inf
    if not math.isfinite(number):
        raise InvalidScore(f"{where} {number} for key '{key}': a score is a finite number{alternative}")
    return number


def typed_scores(metric: Metric, value: Any) -> Scores:
    """One example's scores as the run records them: reported key -> `typed_value`, exactly the
    metric's per-example keys (a dict-valued `score` that leaves one out or adds another raises
    `InvalidScore`, as does a value that is not a score)."""
    if not isinstance(value, dict):
        value = {metric.name: value}
    own = reported_keys(metric)
    if set(value) != set(own.values()):
        given = {key if isinstance(key, str) else _shown(key) for key in value}
        missing, extra = sorted(set(own.values()) - given), sorted(given - set(own.values()))
        raise InvalidScore(
            f"metric {metric.name} returned keys {sorted(given)}, expected {sorted(own.values())}"
            + (f" (missing {', '.join(missing)})" if missing else "")
            + (f" (undeclared {', '.join(extra)}: add them to `declares.keys`)" if extra else "")
        )
    return {reported: typed_value(metric, key, value[key]) for reported, key in own.items()}


def _shown(value: Any) -> str:
    """A short repr of what a metric returned (its class, where its `__repr__` raises)."""
    text = plugin_text(lambda: repr(value))
    if text is None:
        return f"<{type(value).__name__} whose repr raised>"
    return text if len(text) <= 60 else text[:57] + "..."


def _end(value: float | None, unbounded: str) -> str:
    return unbounded if value is None else f"{value:g}"

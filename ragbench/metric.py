"""Base class of metric plugins: a score per example, then an aggregate per task."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, ClassVar

if TYPE_CHECKING:
    from .context import Context
    from .run.checks import Preflight
    from .types import Example, Prediction

Score = float | None
Scores = dict[str, Score]


class Metric:
    """`score` returns one value (reported under `name`) or a dict of named values; it may be
    async when it calls a judge or an NLI model through `ctx`. None means "not scorable"
    and is counted apart from errors. `aggregate` is the mean unless the metric says otherwise.
    """

    name: ClassVar[str] = ""
    keys: ClassVar[tuple[str, ...]] = ()  # the names a dict-valued `score` reports; default (name,)
    corpus_keys: ClassVar[tuple[str, ...]] = ()  # the names `corpus` reports
    needs: ClassVar[tuple[str, ...]] = ()  # run components the metric calls: "nli", "judge"
    # Kinds of gold (Task.gold_fields; "citations" for tasks whose answers cite) the metric scores
    # against, all required; () scores any task.
    gold_needs: ClassVar[tuple[str, ...]] = ()
    higher_is_better: ClassVar[bool] = True
    # Events a score folds in that a reader must see counted (e.g. a judge reply that did not parse,
    # scored as upstream's rule says): name -> what it means. `score` calls `ctx.count(name)` for each;
    # the run adds them up per task and shows them in the console, report.md and results.json `counted`.
    counters: ClassVar[dict[str, str]] = {}

    @classmethod
    def fits(cls, task: Any) -> bool:
        """Whether `task`'s records carry the gold this metric needs (a task that does not declare its
        gold, as older plugins, is given the benefit of the doubt)."""
        if task.gold_fields is None:
            return True
        offered = set(task.gold_fields) | ({"citations"} if task.cites else set())
        return set(cls.gold_needs) <= offered

    def preflight(self, check: "Preflight", task: Any) -> None:
        """The metric's own pre-flight on `task`, before anything loads (a file it reads, a service
        it calls): report with `check.problem("...; the option that fixes it")`. Default: nothing
        (whether its gold and its judge/NLI model are there is checked for every metric)."""

    def score_keys(self) -> tuple[str, ...]:
        """Per-example keys; a corpus-only metric (only `corpus_keys`) has none."""
        return self.keys or (() if self.corpus_keys else (self.name,))

    def score(self, example: "Example", prediction: "Prediction",
              ctx: "Context | None" = None) -> Score | Scores | Awaitable[Score | Scores]:
        raise NotImplementedError

    def aggregate(self, key: str, values: list[float]) -> float:
        return sum(values) / len(values) if values else float("nan")

    def corpus(self, samples: list[dict[str, Any]], seed: int) -> dict[str, float | None]:
        """Values of `corpus_keys` that only exist for the whole set (MAUVE, a bootstrap median),
        computed once from the scored sample records (question, gold, prediction, scores);
        reported without interval or slices."""
        return {}

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


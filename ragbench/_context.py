"""What a system (or a judge-based metric) gets for one example."""

from __future__ import annotations

import asyncio
import numbers
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ._llm import LLM
from ._read_only import read_only
from ._task import Task
from ._trace_groups import group
from ._types import Document, Step
from ._values.ceiling import CeilingHeld, ExampleCeiling
from ._values.json_values import JsonObject

if TYPE_CHECKING:
    from ._nli import NLI  # the run's, built with the judges (ragbench._run.models.metric_models)
    from ._retrieval.handle import Retrieval
    from ._run.lifetime.resources import RunResources


class JudgedDeclaration(Protocol):
    """What `Context.judges_for` reads of a metric's declaration (a `MetricDeclaration`)."""

    @property
    def judge_roles(self) -> tuple[str, ...]: ...


class JudgedMetric(Protocol):
    """What `Context.judges_for` reads of a metric (a `Metric`, which imports this module)."""

    name: str

    @property
    def declares(self) -> JudgedDeclaration: ...


@dataclass
class ScoringContext(CeilingHeld):
    """What a metric gets for one example: the task, the run's seed, its judges (`ctx.ask_judges`) and NLI model,
    its counted events (`ctx.count`), the trace of its calls, the run's resources and its ceiling. A system gets
    a `Context`, which is one with the model, the tools and the retriever besides."""

    task: Task
    seed: int = 0
    trace: list[Step] = field(default_factory=list)
    judges: list[LLM] = field(default_factory=list)  # --judge engines, for judge-based metrics
    nli: NLI | None = None  # --nli entailment judge, for metrics that declare needs = ("nli",)
    counts: Counter[str] = field(default_factory=Counter)  # a metric's counted events (MetricDeclaration.counters)
    # The run's worker processes (`await ctx.resources.workers.run(fn, *args)` for CPU-bound work) and page
    # caches (`await ctx.resources.page_cache()`); None outside a run.
    resources: RunResources | None = None
    # The example's ceiling (ragbench._values.ceiling), shared with its LLM handles: every step counts against it.
    # Given when the context is made, it cannot be replaced or deleted (`__setattr__`).
    ceiling: ExampleCeiling | None = None

    def count(self, event: str, n: int = 1) -> None:
        """Count an event a score folds in (`MetricDeclaration.counters`), so it is shown, not hidden in a number."""
        self.counts[event] += n

    def judges_for(self, metric: JudgedMetric) -> list[LLM]:
        """The --judge engines `metric` asks: one per role of its `judge_roles` (the last judge taking the
        roles left), or every one. A ValueError saying what to pass when there are none or too many."""
        roles = metric.declares.judge_roles
        if not self.judges:
            asked = f"one judge per role ({', '.join(roles)})" if len(roles) > 1 else "an LLM judge"
            raise ValueError(f"metric {metric.name} asks {asked}: pass --judge ENGINE:MODEL")
        if roles and len(self.judges) > len(roles):
            raise ValueError(
                f"metric {metric.name} asks at most {len(roles)} judge(s), one per role "
                f"({', '.join(roles)}), and this run has {len(self.judges)} --judge"
            )
        if not roles:
            return list(self.judges)
        return [self.judges[min(i, len(self.judges) - 1)] for i in range(len(roles))]

    async def ask_judges(
        self, metric: JudgedMetric, messages: list[dict[str, str]], *, return_exceptions: bool = False, **sampling: Any
    ) -> list[Any]:
        """Every judge of `metric` (`judges_for`) asked the same chat at once, traced as step
        `judge:<metric name>`: their replies in --judge order (with `return_exceptions`, a failed call's
        exception in its place instead of raising)."""
        judges = self.judges_for(metric)
        return await asyncio.gather(
            *(judge.chat(messages, step=f"judge:{metric.name}", **sampling) for judge in judges),
            return_exceptions=return_exceptions,
        )

    def group(self, label: str) -> AbstractContextManager[None]:
        """`with ctx.group("iteration 2"):` - the steps made inside belong to that group of the
        system's structure (ragbench._trace_groups; the viewer's timeline shows them grouped)."""
        return group(label)

    @contextmanager
    def step(self, kind: str, name: str, request: JsonObject) -> Iterator[Step]:
        """Trace a retrieval or tool call: `with ctx.step("retrieval", "bm25", {...}) as s: s.response = ...`."""
        self._take_step()
        record = Step(kind=kind, name=name, request=request)
        self.trace.append(record)  # in call order, as LLM steps are
        started = time.perf_counter()
        try:
            yield record
        except Exception as exc:
            record.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            record.seconds = round(time.perf_counter() - started, 6)

    def record_step(
        self,
        name: str,
        *,
        inputs: Mapping[str, object] | None = None,
        outputs: Mapping[str, object] | None = None,
        docs: Sequence[Document] | None = None,
    ) -> Step:
        """Record a step of the system's own in the example's trace - a rerank, a filter, a choice among
        candidates, a tool it calls itself - with its named `inputs` and `outputs` and the documents it
        kept (`docs`, in its order): `ctx.record_step("rerank", inputs={"candidates": 20},
        outputs={"kept": [d.id for d in top]}, docs=top)`. The viewer's timeline shows it; a replay
        re-runs the system, which records it again (it is not an external call, nothing answers it).

        Values must be JSON: dicts with string keys, lists, tuples, strings, numbers, booleans, None
        (numpy scalars become numbers; a `Document` is kept as the sample keeps the documents shown);
        anything else raises a TypeError naming the step and where the value is. The step belongs to
        the enclosing `ctx.group`; it takes no time unless the returned Step's `seconds` is set."""
        self._take_step()
        step = Step(
            kind="custom",
            name=str(name),
            request=_json_value(dict(inputs or {}), f"{name}: inputs"),
            response=_json_value(dict(outputs or {}), f"{name}: outputs"),
            docs=None if docs is None else [_document(d, f"{name}: docs[{k}]") for k, d in enumerate(docs)],
        )
        self.trace.append(step)
        return step

    def _take_step(self) -> None:
        """Count a traced step against the example's ceiling (`CeilingReached` past it)."""
        if self.ceiling is not None:
            self.ceiling.take_step()


@dataclass
class Context(ScoringContext):
    """What a system gets for one example: a `ScoringContext` with the model (`ctx.llm`; its roles' models,
    `ctx.model(role)`), the task's tools and the retriever (`await ctx.retriever.search(query, k)`)."""

    llm: LLM = field(kw_only=True)
    tools: dict[str, Any] = field(default_factory=dict)
    retriever: Retrieval | None = None  # `await ctx.retriever.search(query, k)` (--retriever)
    models: dict[str, LLM] = field(default_factory=dict)  # --role-model engines, by the system's role names
    # the steps the trace ends with, left to make until the run reads it whole (`defer_steps`, `steps_later`)
    _later: list[Callable[[], Sequence[Step]]] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.tools = read_only(self.tools)  # one run's tools, shared by its examples: no plugin swaps another's

    def steps_later(self, make: Callable[[], Sequence[Step]]) -> None:
        """The last steps of the example's trace, made by `make`: now, or, in a run (`defer_steps`), once the system
        has returned and the run reads the trace whole (`settle_trace`): for steps nothing reads before (an
        application's spans read as steps, made after its next example was asked: docs/performance.md, "Your own
        application"). The system adds no step after calling this."""
        if self._later is None:
            self.trace.extend(make())
        else:
            self._later.append(make)

    def defer_steps(self) -> None:
        """The run reads this context's trace through `settle_trace` once the system has returned: the steps
        `steps_later` is given wait until then."""
        self._later = []

    def settle_trace(self) -> list[Step]:
        """The trace with the steps `steps_later` left to make appended, in the order they were left."""
        later, self._later = self._later or [], None
        for make in later:
            self.trace.extend(make())
        return self.trace

    def model(self, role: str) -> LLM:
        """The LLM of one of the system's roles: its own --role-model, else the run's model."""
        return self.models.get(role, self.llm)

    def required_retriever(self) -> Retrieval:
        """`ctx.retriever`, for a system that searches: a run gives one to a system that declares `retrieves`
        (`make_context` always does), and a context without one is a ValueError naming that fix."""
        if self.retriever is None:
            raise ValueError(
                "this context has no retriever: a system that searches declares "
                "SystemDeclaration(retrieves=True), and its run then gives it the --retriever"
            )
        return self.retriever


def _document(doc: Any, where: str) -> JsonObject:
    if not isinstance(doc, Document):
        raise TypeError(f"ctx.record_step({where}): a Document is expected, not {type(doc).__name__}")
    recorded: JsonObject = _json_value(doc.to_dict(), where, strict=False)  # a mapping stays one
    return recorded


def _json_value(value: Any, where: str, strict: bool = True) -> Any:
    """`value` as the sample file will hold it (so a trace read back equals the one recorded). A value
    that is not JSON is a TypeError naming where it is; inside a Document (`strict` off: its metadata
    is the retriever's, not the system's) it becomes its text, as the sample's documents shown do."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, Document):
        return _document(value, where)
    if isinstance(value, Mapping):
        bad = next((key for key in value if not isinstance(key, str)), None) if strict else None
        if bad is not None:
            raise TypeError(f"ctx.record_step({where}): key {bad!r} is a {type(bad).__name__}, not a string")
        return {str(key): _json_value(item, f"{where}[{key!r}]", strict) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(item, f"{where}[{k}]", strict) for k, item in enumerate(value)]
    if not strict:
        return str(value)
    raise TypeError(
        f"ctx.record_step({where}): {type(value).__name__} is not JSON (use a string, number, "
        "bool, None, list or dict of them)"
    )

"""What a system (or a judge-based metric) gets for one example."""
from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from .llm import LLM
from .nli import NLI
from .task import Task
from .trace_groups import group
from .types import Step

if TYPE_CHECKING:
    from .retrieval.handle import Retrieval
    from .run.resources import RunResources


@dataclass
class Context:
    llm: LLM
    task: Task
    seed: int = 0
    trace: list[Step] = field(default_factory=list)
    tools: dict[str, Any] = field(default_factory=dict)
    judges: list[LLM] = field(default_factory=list)  # --judge engines, for judge-based metrics
    retriever: "Retrieval | None" = None  # `await ctx.retriever.search(query, k)` (--retriever)
    nli: NLI | None = None  # --nli entailment judge, for metrics that declare needs = ("nli",)
    models: dict[str, LLM] = field(default_factory=dict)  # --role-model engines, by the system's role names
    counts: Counter[str] = field(default_factory=Counter)  # a metric's counted events (Metric.counters)

    @property
    def resources(self) -> "RunResources | None":
        """The run's worker processes (`await ctx.resources.workers.run(fn, *args)` for CPU-bound work)
        and page caches (`await ctx.resources.page_cache()`): those of the run the task is bound to
        (`Task.bind`); None outside a run."""
        return getattr(self.task, "resources", None)

    def count(self, event: str, n: int = 1) -> None:
        """Count an event a score folds in (see `Metric.counters`), so it is shown, not hidden in a number."""
        self.counts[event] += n

    def model(self, role: str) -> LLM:
        """The LLM of one of the system's roles: its own --role-model, else the run's model."""
        return self.models.get(role, self.llm)

    @property
    def judge(self) -> LLM | None:
        return self.judges[0] if self.judges else None

    def group(self, label: str):
        """`with ctx.group("iteration 2"):` - the steps made inside belong to that group of the
        system's structure (ragbench.trace_groups; the viewer's timeline shows them grouped)."""
        return group(label)

    @contextmanager
    def step(self, kind: str, name: str, request: dict[str, Any]) -> Iterator[Step]:
        """Trace a retrieval or tool call: `with ctx.step("retrieval", "bm25", {...}) as s: s.response = ...`."""
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

"""A task as a run plans it (`PlannedTask`): the task, its system (none where saved predictions are scored again), its
metrics, the corpus it ships, and the run's resources once bound."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..._metric import Metric
from ..._system import System
from ..._task import Task
from ..._task.protocols import UsesRunResources, task_corpus

if TYPE_CHECKING:
    from ..lifetime.resources import RunResources


@dataclass
class PlannedTask:
    name: str
    task: Task
    system: System | None  # None when the run only scores saved predictions (ragbench rescore)
    metrics: list[Metric]
    resources: RunResources | None = None  # the run's, from `bind` (what systems and metrics reach as ctx.resources)
    corpus: Path | None = field(init=False)  # the corpus the task ships (`OwnCorpus`); None: it ships none

    def __post_init__(self) -> None:
        self.corpus = task_corpus(self.task)

    def bind(self, resources: RunResources) -> None:
        """The run's resources, before anything else starts: lent to the task when it works in them."""
        self.resources = resources
        if isinstance(self.task, UsesRunResources):
            self.task.bind(resources)

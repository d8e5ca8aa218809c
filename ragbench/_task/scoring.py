"""How a task's answers are scored, in one value: `Task.scoring`.

A task declares its scoring as one `TaskScoring`: `scoring = TaskScoring(metrics=("em",))` on the class, or
`self.scoring = dataclasses.replace(self.scoring, ...)` where its options decide (in `__init__`). What the run
reads is always `task.scoring`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .._values.names import checked_name


@dataclass(frozen=True)
class TaskScoring:
    # the metrics a run scores the task with, when --metrics does not replace them
    metrics: tuple[str, ...] = ()
    # options of those metrics (metric name -> options; --metric-arg overrides them); read-only
    metric_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # example.meta keys the results are sliced by (per-slice tables)
    slice_fields: tuple[str, ...] = ()
    # The benchmark's official script counts a missing or failed prediction as wrong (it divides by every gold
    # example): each key that scores 0 at worst is then reported so, the answered-only mean beside it
    # (ragbench._reports.results.missing_as_wrong). False: the mean over the answered examples, failures counted apart.
    missing_scores_zero: bool = False
    # the kinds of gold the records carry: answers (short strings), label, choices, qa_pairs, answer_lists,
    # long_answer, claims, or a kind a benchmark registers (metrics name the kinds they need in `gold_needs`;
    # a task that cites also offers "citations"); None: not declared, every metric may try
    gold_fields: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", tuple(self.metrics))
        object.__setattr__(
            self,
            "slice_fields",
            tuple(checked_name(name, "slice field", "a task's slice_fields") for name in self.slice_fields),
        )  # it names plot files
        if self.gold_fields is not None:
            object.__setattr__(self, "gold_fields", tuple(self.gold_fields))
        object.__setattr__(
            self,
            "metric_options",
            MappingProxyType(
                {name: MappingProxyType(dict(options)) for name, options in dict(self.metric_options).items()}
            ),
        )

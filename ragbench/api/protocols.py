"""The optional protocols a task adds, and how a system reads them of any task.

    from ragbench.api.protocols import UsesTools, task_input

A task implements a protocol by having its methods (no base class needed); a system tests for one
(`isinstance(task, UsesTools)`) or reads it through a function that answers for any task:
`UsesRunResources` (`bind(resources)`: the run's `RunResources`), `UsesTools` (`setup`/`teardown`: the
tools systems get as `ctx.tools`), `PredictionRecords` and `PredictionFile` (the prediction records a recorded
system replays, from a benchmark's own folder or file),
`StandingInstruction` (`instruction_key`, `task_input`), `Demonstration` (`demonstration()`), `PlotKeys`
(metric keys report.md draws per slice), `SystemDefaults` (system options that follow from the task's) and
`OwnCorpus` (the passage file the task ships, searched by a run that names no retriever), `Sequenced` (examples
answered in order, each shown the system's answers to the ones before it);
`task_input`, `instruction_key`, `closed_answer` and `task_demonstration` read them of any task.
docs/writing-plugins.md, "The task-system contract", says what each is for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragbench.api._lazy import lazy_names

if TYPE_CHECKING:  # type checkers read each name where it is defined; it is imported on first use (below)
    from ragbench._task.protocols import (
        Demonstration,
        OwnCorpus,
        PlotKeys,
        PredictionFile,
        PredictionRecords,
        Sequenced,
        StandingInstruction,
        SystemDefaults,
        UsesRunResources,
        UsesTools,
        closed_answer,
        instruction_key,
        task_demonstration,
        task_input,
    )

_MODULES = {
    "ragbench._task.protocols": (
        "UsesRunResources",
        "UsesTools",
        "PredictionRecords",
        "PredictionFile",
        "StandingInstruction",
        "Demonstration",
        "PlotKeys",
        "SystemDefaults",
        "OwnCorpus",
        "Sequenced",
        "task_input",
        "instruction_key",
        "closed_answer",
        "task_demonstration",
    ),
}
__all__, __getattr__, __dir__ = lazy_names(__name__, _MODULES)

"""A system's reporting hooks over one task's finished samples (`System.report`, `format_adherence`,
`statistics`), given typed records. A hook that raises does not cost the run its results: its error
joins the problems the system reports (results.json `system_reports`), which the console shows and
which mark the run incomplete."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Iterator

from .._records import SampleRecord
from .._storage.jsonl import parse_json
from .._storage.rundir import finalized_samples, line_offsets
from .._system import System
from .results import aggregation_view

HOOKS = ("report", "format_adherence", "statistics")


class SavedRecords(Sequence):
    """A task's samples file as `SampleRecord`s without texts, read from the file each time they are iterated
    or indexed (0.13 ms a record of 10 steps on 2 loaded CPU cores): a system's figures over 100,000 examples
    never hold 100,000 records, only where each one's line starts (8 bytes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offsets = line_offsets(path) if path.is_file() else [0]

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __iter__(self) -> Iterator[SampleRecord]:
        for record in finalized_samples(self.path):
            yield self._record(record)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        place = range(len(self))[index]  # an IndexError past either end, as a list's
        with self.path.open("rb") as lines:
            lines.seek(self.offsets[place])
            return self._record(parse_json(lines.read(self.offsets[place + 1] - self.offsets[place])))

    @staticmethod
    def _record(record: dict[str, Any]) -> SampleRecord:
        return SampleRecord.from_dict(aggregation_view(record), has_text=False)


def system_hooks(system: System, samples: Path, complete_data: bool) -> tuple[Any, Any, Any]:
    """(report, format adherence, statistics) of `system` over the task's samples file (rewritten in data
    order), as `SavedRecords`; nothing is read for a system without such hooks."""
    if all(getattr(type(system), hook) is getattr(System, hook) for hook in HOOKS):
        return None, None, None
    records = SavedRecords(samples)
    failures: list[str] = []

    def call(hook: str, *args: Any) -> Any:
        try:
            return getattr(system, hook)(records, *args)
        except Exception as exc:  # a plugin's bug, or a hook written for dict records (docs/changelog.md)
            failures.append(f"System.{hook} of {type(system).__name__} failed ({type(exc).__name__}: {exc}); "
                            "its records are ragbench.api.SampleRecord objects (docs/writing-plugins.md)")
            return None

    report, checks, figures = call("report", complete_data), call("format_adherence"), call("statistics")
    if failures:
        report = {**(report or {}), "errors": [*(report or {}).get("errors", []), *failures]}
    return report, checks, figures

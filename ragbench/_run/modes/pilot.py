"""A pilot as a run mode is given it (`ragbench estimate`, ragbench._run.estimate.pilot_run): of the records the mode
would run, only those at each task's drawn positions run, and then the attempt stops as an interrupted one stops
(`PilotEnded`: run.json not finished, the attempt recorded and counted in the run's cost)."""

from __future__ import annotations

from dataclasses import dataclass

from ..sequences import InOrder, Work


class PilotEnded(Exception):
    """The pilot's records ran: the attempt stops here, as an interrupted one (run.json not finished)."""


@dataclass(frozen=True)
class Pilot:
    """The records a pilot runs: by task, the positions drawn (ragbench._run.estimate.pilot_run.PilotSize)."""

    positions: dict[str, frozenset[int]]

    def of(self, work: Work) -> Work:
        """Those of `work` (the records a mode would run, in its order) at the drawn positions; of a sequence's
        records, those up to the last one drawn (the earlier ones' answers are in its question)."""
        for entry in work:
            if isinstance(entry, InOrder):
                kept = entry.up_to(self.positions[entry.planned.name])
                if kept is not None:
                    yield kept
            elif entry[1] in self.positions[entry[0].name]:
                yield entry

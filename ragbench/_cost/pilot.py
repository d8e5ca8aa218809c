"""The estimate's pilot (`ragbench estimate`, ragbench._run.estimate.pilot_run): how many of each task's records it
runs (`PilotSize`), drawn at random from the run's --seed, and the records of a run mode it keeps (`Pilot`): of the
records the mode would run, only those at each task's drawn positions run, and then the attempt stops as an
interrupted one stops (`PilotEnded`: run.json not finished, the attempt recorded and counted in the run's cost)."""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

from .._errors import ConfigError

MIN_PILOT = 3  # examples per task: a spread with 2 degrees of freedom


@dataclass(frozen=True)
class PilotSize:
    """How many records of each task the pilot runs: a `fraction` of them, or a `count`; at least `MIN_PILOT`."""

    fraction: float | None = None
    count: int | None = None

    @staticmethod
    def precision(text: str) -> float:
        """`--precision 10%`: the share of their point within which the dollars are wanted (0 to 100%, not 0)."""
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*%?\s*", text)
        if not match or not 0 < float(match.group(1)) < 100:
            raise ConfigError(f"--precision {text!r}: expected a share of the point above 0, below 100% (10%)")
        return float(match.group(1)) / 100

    @classmethod
    def parse(cls, text: str) -> PilotSize:
        """`5%` (a share of each task's records) or `20` (records per task); a ConfigError of one line else."""
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(%?)\s*", text)
        value = float(match.group(1)) if match else -1.0
        if match and match.group(2) and 0 < value <= 100:
            return cls(fraction=value / 100)
        if match and not match.group(2) and value >= 1 and value.is_integer():
            return cls(count=int(value))
        raise ConfigError(f"--pilot {text!r}: expected a share of each task's records (5%) or a count (20)")

    def positions(self, records: int, seed: str) -> frozenset[int]:
        """The positions the pilot runs of a task of `records` records: a simple random sample, drawn from `seed`
        (the same run's pilot is the same)."""
        wanted = self.count if self.count is not None else math.ceil((self.fraction or 0) * records)
        wanted = min(records, max(wanted, MIN_PILOT))
        # the first `wanted` of the seed's order of the records: a larger pilot of the same run holds a smaller one
        return frozenset(random.Random(seed).sample(range(records), records)[:wanted])


class PilotEnded(Exception):
    """The pilot's records ran: the attempt stops here, as an interrupted one (run.json not finished)."""


@dataclass(frozen=True)
class Pilot:
    """The records a pilot runs: by task, the positions drawn (`PilotSize.positions`); a run mode keeps those of
    its records (ragbench._run.sequences.drawn)."""

    positions: dict[str, frozenset[int]]

"""How a run, its `--resume` or `ragbench rescore` ended: its results.json and folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .._reports.results.schema import Results
from .._values.json_values import JsonObject


@dataclass(frozen=True)
class RunOutcome:
    typed_results: Results  # results.json, as written or (a finished run resumed) as `read_results` reads it
    run_dir: Path
    already_finished: bool = False  # --resume of a finished run with nothing left to do
    rebuilt: bool = False  # ... whose results.json was missing or unreadable: rebuilt from the samples

    @property
    def results(self) -> JsonObject:
        """results.json's object, as the console and plugin tests read it."""
        return self.typed_results.to_dict()

    @property
    def complete(self) -> bool:
        return self.typed_results.complete

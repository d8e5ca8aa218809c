"""Where a run writes and how (`RunOutput`): its folder, its response cache, its progress bar."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .run_option import SCORED, option


@dataclass(frozen=True)
class RunOutput:
    """Where a run writes and how: its folder (a new run, a resumed one, a replaced one), its response cache, its
    progress bar. None of them changes results: none is part of the run's identity."""

    output: str | None = option(
        None,
        help="run folder (default: runs/<system>__<model>__<config hash>)",
        identity="never",
        offers={
            **SCORED,
            "rescore": {"help": "folder of the rescored run (default: RUN__rescored; RUN is not changed)"},
        },
    )
    resume: bool = option(
        False,
        help="continue the run in the output folder (failed examples are tried again)",
        identity="never",
        offers=SCORED,
    )
    overwrite: bool = option(  # replace an earlier run in the output folder
        False, help="replace the run in the output folder", identity="never", offers={**SCORED, "rescore": {}}
    )
    cache: str | None = option(
        None,
        help="SQLite response cache (default: in the run folder)",
        identity="never",
        offers={
            **SCORED,
            "rescore": {
                "help": "SQLite response cache of the judge and NLI calls (default: in the output folder; a copy of "
                "RUN/cache.sqlite answers the calls RUN made, and RUN stays unchanged)"
            },
        },
    )
    progress: bool = option(
        True,
        help="no progress bar (examples done of the run's, ETA)",
        identity="never",
        offers={**SCORED, "rescore": {}},
    )

    def problems(self) -> list[str]:
        folder = self.cache is not None and Path(self.cache).is_dir()
        return [f"--cache {self.cache}: a folder is there; give a file path for the SQLite cache"] if folder else []

"""Where a run writes and how: its folder (a new run, a resumed one, a replaced one), its response cache, its
progress bar."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ...._values.run_groups import RunOutput
from .option import Option, OptionGroup


class OutputOptions(OptionGroup):
    TITLE: ClassVar[str] = "Output and resume"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option(
            ("--output",),
            ("output",),
            {"default": None, "help": "run folder (default: runs/<system>__<model>__<config hash>)"},
        ),
        Option(
            ("--resume",),
            ("resume",),
            {
                "is_flag": True,
                "help": "continue the run in the output folder (failed examples are tried again)",
            },
        ),
        Option(("--overwrite",), ("overwrite",), {"is_flag": True, "help": "replace the run in the output folder"}),
        Option(
            ("--cache",), ("cache",), {"default": None, "help": "SQLite response cache (default: in the run folder)"}
        ),
        Option(
            ("--no-progress",),
            ("progress",),
            {"is_flag": True, "help": "no progress bar (examples done of the run's, ETA)"},
        ),
    )

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> RunOutput:
        return RunOutput(
            output=values.get("output"),
            resume=values.get("resume", False),
            overwrite=values.get("overwrite", False),
            cache=values.get("cache"),
            progress=not values.get("no_progress", False),
        )

"""A system's reporting hooks over one task's finished samples (`System.report`, `format_adherence`,
`statistics`), given typed records. A hook that raises does not cost the run its results: its error
joins the problems the system reports (results.json `system_reports`), which the console shows and
which mark the run incomplete."""
from __future__ import annotations

from typing import Any

from .._records import SampleRecord
from .._system import System


HOOKS = ("report", "format_adherence", "statistics")


def system_hooks(system: System, samples: list[dict[str, Any]], complete_data: bool) -> tuple[Any, Any, Any]:
    """(report, format adherence, statistics) of `system` over the task's sample records (the
    aggregation view: without texts). The records are built only for a system that has such hooks
    (0.13 ms a record of 10 steps on 2 loaded CPU cores: 13 s for 100,000 examples)."""
    if all(getattr(type(system), hook) is getattr(System, hook) for hook in HOOKS):
        return None, None, None
    records = [SampleRecord.from_dict(s, has_text=False) for s in samples]
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

"""A system's reporting hooks over one task's finished samples (`System.report`, `format_adherence`,
`statistics`), given typed records. A hook that raises (whatever it raises: ragbench._plugin_calls), or
returns what its contract does not allow (`returned_problem`: a report whose errors are a string, a format
count of -3 or over its total, figures JSON cannot hold), does not cost the run its results: its value is
dropped, its error joins the problems the system reports (results.json `system_reports`, with the hook's
traceback under `tracebacks`), which the console shows and which mark the run incomplete; every --resume
gets the same results, not a traceback."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, TypeGuard

from .._errors import RecordError
from .._plugin_calls import PluginCall
from .._records import SampleRecord, read_samples, record_at
from .._storage.files import file_there
from .._storage.sample_files import line_offsets
from .._system import System
from .._values.json_values import json_problem

ADHERENCE_FIX = 'a list of {"format": str, "followed": n, "of": m, "fix": str} with 0 <= n <= m'


class SavedRecords(Sequence[SampleRecord]):
    """A task's samples file as `SampleRecord`s without texts, read from the file each time they are iterated
    or indexed (a fraction of a millisecond a record): a system's figures over 100,000 examples
    never hold 100,000 records, only where each one's line starts (8 bytes)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @cached_property
    def offsets(self) -> Sequence[int]:
        """Where each line starts, read when first indexed or measured (a hook that returns without reading the
        records costs no pass over the file)."""
        return line_offsets(self.path) if file_there(self.path) else [0]

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __iter__(self) -> Iterator[SampleRecord]:
        yield from read_samples(self.path, has_text=False, rewritten=True)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        place = range(len(self))[index]  # an IndexError past either end, as a list's
        record = record_at(self.path, place, self.offsets[place], has_text=False)  # one line a record there
        if isinstance(record, RecordError):  # the file changed since it was rewritten
            raise record
        return record


def system_hooks(system: System, samples: Path, complete_data: bool) -> tuple[Any, Any, Any]:
    """(report, format adherence, statistics) of `system` over the task's samples file (rewritten in data
    order), as `SavedRecords`; nothing is read for a system whose hooks do not read it."""
    records = SavedRecords(samples)
    failures: list[str] = []
    tracebacks: dict[str, str] = {}

    def call(hook: str, *args: Any) -> Any:
        who = f"System.{hook} of {type(system).__name__}"
        reporter = hook_of(system, hook)
        if reporter is None:  # an optional hook the system neither defines nor declares
            return None
        with PluginCall() as guarded:
            value = reporter(records, *args)
        if guarded.error is not None:  # a plugin's bug, or a hook written for dict records (docs/changelog.md)
            tracebacks[hook] = guarded.traceback or ""
            failures.append(
                f"{who} failed ({guarded.error}); its records are ragbench.api.SampleRecord objects "
                "(docs/writing-plugins.md)"
            )
            return None
        problem = returned_problem(hook, value)
        if problem is not None:
            failures.append(f"{who} returned {problem}; its value is left out (docs/writing-plugins.md)")
            return None
        return value

    report, checks, figures = call("report", complete_data), call("format_adherence"), call("statistics")
    if failures:
        report = {**(report or {}), "errors": [*(report or {}).get("errors", []), *failures]}
    if tracebacks:
        report["tracebacks"] = tracebacks
    return report, checks, figures


def hook_of(system: System, hook: str) -> Callable[..., Any] | None:
    """The system's own reporting `hook`, else, for `statistics` and `format_adherence`, what it declares it records
    (`declares.recorded`); None where it has neither."""
    if hasattr(type(system), hook):
        own: Callable[..., Any] = getattr(system, hook)
        return own
    recorded = system.declares.recorded
    return getattr(recorded, hook) if recorded is not None and hook in ("statistics", "format_adherence") else None


def returned_problem(hook: str, value: Any) -> str | None:
    """What in a reporting hook's value breaks its contract (one line), or None: `report` None or an object
    whose "errors" are a list of strings, `format_adherence` None or a list of counts (`adherence_problem`),
    `statistics` None or an object; each of JSON values."""
    if value is None:
        return None
    if hook == "format_adherence":
        return adherence_problem(value)
    if not isinstance(value, dict):
        return f"{type(value).__name__}, not an object (a dict) or None"
    errors = value.get("errors", []) if hook == "report" else []
    if not isinstance(errors, list):
        return f'"errors" as a {type(errors).__name__}, not a list of strings (one per problem)'
    odd = next((error for error in errors if not isinstance(error, str)), None)
    if odd is not None:
        return f'"errors" holding a {type(odd).__name__}, not a list of strings (one per problem)'
    return json_problem(value, hook)


def adherence_problem(checks: Any) -> str | None:
    """What keeps `checks` from being format counts (ADHERENCE_FIX), or None."""
    if not isinstance(checks, list):
        return f"{type(checks).__name__}, not {ADHERENCE_FIX}"
    for n, check in enumerate(checks):
        if not isinstance(check, dict) or not all(isinstance(check.get(key), str) for key in ("format", "fix")):
            return f"item {n} without a str format and fix, not {ADHERENCE_FIX}"
        followed, of = check.get("followed"), check.get("of")
        if not (is_count(followed) and is_count(of) and followed <= of):
            return f"item {n} with followed {shown(followed)} of {shown(of)}, not {ADHERENCE_FIX}"
    return json_problem(checks, "format_adherence")


def is_count(value: Any) -> TypeGuard[int]:
    return type(value) is int and value >= 0


def shown(value: Any) -> str:
    """A count as its number, anything else as its type (whose repr is the plugin's code)."""
    return str(value) if type(value) is int and abs(value) < 10**12 else f"a {type(value).__name__}"

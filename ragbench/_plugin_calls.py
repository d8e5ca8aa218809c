"""The one guard around every call into plugin code (a system's `run` and its reporting hooks, a metric's
`score`, `aggregate` and `corpus`, a task's hooks, a retriever's `search`): whatever the plugin raises is
its fault, caught and told in one line with its traceback, for the caller to count as that example's (or
that hook's) failure, while the run goes on.

A plugin's fault is any exception it can raise, not only an `Exception`: `SystemExit` (a `sys.exit` in the
plugin or in a thread pool it awaits), `GeneratorExit`, a `KeyboardInterrupt` it raises itself, a class of
its own deriving from `BaseException`. Left to propagate, asyncio ends the whole event loop on SystemExit
and KeyboardInterrupt, and a task group on the others. Two are not the plugin's: the run's own stop signals
(their exception is raised by the stop handler: `ragbench._stop_signals.raised_by_stop_signal` tells a real
Ctrl-C from a plugin's `raise KeyboardInterrupt`), and the cancellation of the task that made the call
(`asyncio.CancelledError` while that task is being cancelled; a plugin's own is its fault).

An exception whose `__str__` raises (or is itself a plugin's bug) still yields a line: its class name. Every
line starts with the exception's class and ": ", which groups the failures by cause
(ragbench._reports.results.failures)."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any

from ._stop_signals import raised_by_stop_signal

TRACEBACK_CHARS = 8_000  # of a failure's formatted traceback a sample keeps: its end, where it was raised
LINE_CHARS = 2_000  # of a failure's line: a message longer than that is cut (a plugin's 10 MB exception text)


def is_plugin_fault(exc: BaseException) -> bool:
    """Whether `exc`, raised out of plugin code, is the plugin's fault (counted), not the run's stop."""
    if isinstance(exc, asyncio.CancelledError):
        return not being_cancelled()
    return not raised_by_stop_signal(exc)


def being_cancelled() -> bool:
    """Whether the task running this is being cancelled (Python 3.10 cannot tell: taken as yes). Outside a
    task (a thread, no event loop), nothing is."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return False
    return task is not None and (not hasattr(task, "cancelling") or task.cancelling() > 0)


def plugin_text(make: Callable[[], Any]) -> str | None:
    """`make()` (text made by a plugin's `__str__` or `__repr__`), or None where it raises a plugin's fault or
    makes no string."""
    try:
        text = make()
    except BaseException as exc:
        if not is_plugin_fault(exc):
            raise
        return None
    return text if isinstance(text, str) else None


def exception_line(exc: BaseException) -> str:
    """`Kind: message` of `exc` (as the run has always told failures), or `Kind` where its text is empty or
    cannot be made (a `__str__` that raises or returns no string)."""
    kind = type(exc).__name__
    text = plugin_text(lambda: str(exc))
    if text is None:
        return f"{kind}: <its message could not be read: its __str__ raised>"
    line = f"{kind}: {text}" if text else kind
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 3] + "..."


def traceback_text(exc: BaseException) -> str:
    """The formatted traceback of `exc` with its chained causes, trimmed to its last TRACEBACK_CHARS
    characters (a deep recursion's repeated frames are already folded by `traceback`). An exception whose
    `__str__` raises even what `traceback` catches (a SystemExit) shows its frames and its line."""
    text = plugin_text(lambda: "".join(traceback.format_exception(exc)))
    if text is None:
        text = "".join(
            ["Traceback (most recent call last):\n", *traceback.format_tb(exc.__traceback__), exception_line(exc), "\n"]
        )
    return text if len(text) <= TRACEBACK_CHARS else "...\n" + text[-TRACEBACK_CHARS:]


class PluginCall:
    """`with PluginCall() as call:` around a call into plugin code: a plugin's fault (`is_plugin_fault`)
    ends the block and is kept as `call.raised`, told as `call.error` (one line) and `call.traceback`;
    anything else (the run's stop, a cancellation) goes on up."""

    def __init__(self) -> None:
        self.raised: BaseException | None = None
        self.error: str | None = None
        self.traceback: str | None = None

    def __enter__(self) -> PluginCall:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> bool:
        if exc is None or not is_plugin_fault(exc):
            return False
        self.raised, self.error, self.traceback = exc, exception_line(exc), traceback_text(exc)
        if not isinstance(exc, Exception):  # it would have ended the run: say how to fail one call instead
            why = (
                f"raised by plugin code; raise an Exception to fail one call: a {type(exc).__name__} ends a whole "
                "program"
            )
            self.error = f"{self.error} ({why})" if ": " in self.error else f"{self.error}: {why}"
        return True

    @property
    def failed(self) -> bool:
        return self.error is not None

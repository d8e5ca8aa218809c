"""The console of a command (stdout, stderr) that fails: a full disk (`> /dev/full`), a failing device, a
reader that went away (`| head -1`). Every write of the command's own (print, click.echo, the progress bar,
a warning) goes through `GuardedStream`, which takes the first error in, drops what comes after and never
raises: the command does all its work (a run writes its whole run folder), then ends in one line on stderr
naming the stream, what failed and the fix (when stderr still works) and an exit code that says it:
EXIT_CONSOLE when the command's own work succeeded, the command's own code otherwise. A reader that went
away is the ordinary end of a pipe: no line, and 128 + SIGPIPE, as a process that signal ends."""

from __future__ import annotations

import errno
import io
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from .._errors import EXIT_CONSOLE

_FIXES = {
    errno.ENOSPC: "free space there, or send it elsewhere",
    errno.EDQUOT: "free space within your disk quota, or send it elsewhere",
}


class GuardedStream(io.TextIOBase):
    """A text stream that writes to `stream` until a write or flush fails with an OSError (`failure`), and
    from then on drops what it is given. It has no `buffer`: bytes reach it only as text."""

    def __init__(self, stream: io.TextIOWrapper, name: str) -> None:
        self.stream, self.name = stream, name
        self.failure: OSError | None = None
        self.target = ""  # what the stream wrote to when it failed (a path, a pipe)

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.stream.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self.stream.errors

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.failure is None and self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    def reconfigure(self, **options: Any) -> None:
        self.stream.reconfigure(**options)

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._guarded(lambda: self.stream.write(text))
        return len(text)

    def flush(self) -> None:
        self._guarded(self.stream.flush)

    def _guarded(self, action: Callable[[], Any]) -> None:
        if self.failure is not None:
            return
        try:
            action()
        except OSError as exc:
            self._failed(exc)

    def _failed(self, exc: OSError) -> None:
        """Remember the error, and point the stream's file descriptor at /dev/null: the text still buffered
        in `stream` is then flushed there when the interpreter ends, not failed at again."""
        self.failure = exc
        try:
            descriptor = self.stream.fileno()
            self.target = os.readlink(f"/proc/self/fd/{descriptor}")
        except (OSError, ValueError, AttributeError):
            descriptor = None
        if descriptor is not None:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, descriptor)
            os.close(devnull)


def guard_console() -> list[GuardedStream]:
    """sys.stdout and sys.stderr, guarded (those that exist: a closed one is None)."""
    guarded = []
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, GuardedStream):
            setattr(sys, name, GuardedStream(stream, name))
            guarded.append(getattr(sys, name))
    return guarded


def with_console_checked(command: Callable[[], Any], streams: list[GuardedStream]) -> Callable[[], None]:
    """`command`, ending in SystemExit with its exit code or the console's (`exit_code`)."""

    def run() -> None:
        try:
            command()
            code: Any = 0
        except SystemExit as exc:
            code = exc.code
        sys.exit(exit_code(code, streams))

    return run


def exit_code(code: Any, streams: list[GuardedStream]) -> Any:
    """The command's exit `code`, once its console is looked at: a stream that failed is said on stderr
    (when stderr still works) and, when the command itself succeeded, is its exit code."""
    failed = [stream for stream in streams if stream.failure is not None]
    if not failed:
        return code
    if all(stream.failure.errno == errno.EPIPE for stream in failed):  # type: ignore[union-attr]
        return code or 128 + signal.SIGPIPE
    stderr = next((stream for stream in streams if stream.name == "stderr"), None)
    if stderr is not None and stderr.failure is None:
        for stream in failed:
            stderr.write(f"{console_problem(stream, succeeded=not code)}\n")
        stderr.flush()
    return code or EXIT_CONSOLE


def console_problem(stream: GuardedStream, succeeded: bool) -> str:
    """The line that says a stream failed: which, what and where, what was lost (and, when the command
    `succeeded`, that the rest of its work was done: its exit code says otherwise), the fix."""
    failure = stream.failure
    assert failure is not None
    what = failure.strerror or type(failure).__name__
    where = f": {stream.target}" if stream.target else ""
    fix = _FIXES.get(failure.errno or 0, "send it elsewhere")
    done = ", its other work is done" if succeeded else ""
    return (
        f"ragbench: error: cannot write to {stream.name} ({what}{where}); what went there from then on was "
        f"dropped{done}; {fix}"
    )

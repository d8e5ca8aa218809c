"""`cli_here`: a `ragbench` command run in the calling process as `python -m ragbench._cli.main ARGS` runs it in a
fresh one - its exit status, stdout and stderr captured, the process state it changes put back - for a test or a
benchmark's quick mode that checks what a command prints, writes and exits with, without the second or more a fresh
interpreter takes to import ragbench (and torch, where the command loads a model) again.

What a fresh process would not share with the caller is made fresh for the command: the environment (the caller's
with `env` set, or `env` alone), the working folder, Python's default warning filters and PYTHONWARNINGS, the root
logger without handlers at WARNING (ragbench's warnings reach stderr through logging's last resort). What the
command changes is put back after it, however it ends: the console streams, `sys.excepthook` and
`sys.unraisablehook`, every signal's handler and the wake-up fd, the environment, the folder, the root logger's
handlers and level, torch's CPU threads (where torch was loaded), the warning filters and `showwarning`. Call it from
the main thread (signal handlers are set there alone).
"""

from __future__ import annotations

import contextlib
import io
import locale
import logging
import os
import signal
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Literal, TextIO

# A fresh interpreter's warning filters, first match first (Python's "Default Warning Filter"; `python -c "import
# warnings; print(warnings.filters)"`), before those PYTHONWARNINGS adds.
FRESH_FILTERS: tuple[tuple[Literal["default", "ignore"], type[Warning], str], ...] = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", ResourceWarning, ""),
)


def cli_here(
    args: Sequence[str],
    env: Mapping[str, str] | None = None,
    *,
    env_only: bool = False,
    cwd: str | Path | None = None,
    prog_name: str = "ragbench",
) -> subprocess.CompletedProcess[str]:
    """`ragbench ARGS` in this process (see the module's docstring), as `subprocess.run(..., capture_output=True,
    text=True)` returns a fresh one's: the exit status, and stdout and stderr decoded as a subprocess's are (the
    locale's encoding, universal newlines). `env`: set for the command alone, over this process's environment
    (`env_only`: the command's whole environment); `cwd`: the folder it runs in; `prog_name`: the name its usage
    lines give it. An exception the command does not turn into an exit status is raised here (a fresh process
    printed its traceback and exited 1)."""
    from .._cli.main import main

    encoding = locale.getpreferredencoding(False)
    with process_state_kept(), tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        if env_only:
            os.environ.clear()
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        fresh_warnings()
        logging.getLogger().handlers.clear()  # as in a fresh process (a test runner's are on it)
        logging.getLogger().setLevel(logging.WARNING)
        sys.stdout = io.TextIOWrapper(out, encoding=encoding, errors="strict", write_through=True)
        sys.stderr = io.TextIOWrapper(err, encoding=encoding, errors="backslashreplace", write_through=True)
        try:
            main.main(args=list(args), prog_name=prog_name)
            code: object = 0
        except SystemExit as exc:
            code = exc.code
        if not isinstance(code, int) and code is not None:  # as Python prints a SystemExit's message
            print(code, file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        stdout, stderr = (
            io.TextIOWrapper(io.BytesIO(_read(stream)), encoding=encoding).read() for stream in (out, err)
        )
    returncode = code if isinstance(code, int) else 0 if code is None else 1
    return subprocess.CompletedProcess(["ragbench", *args], returncode, stdout, stderr)


def _read(stream: IO[bytes]) -> bytes:
    stream.seek(0)
    return stream.read()


def fresh_warnings() -> None:
    """Warnings as a fresh `python` with this environment handles them: its default filters and PYTHONWARNINGS
    (a test runner's filters gone), each shown once per location (the registries of earlier commands forgotten)
    and written to `sys.stderr` as it is when the warning is raised. For the block of `process_state_kept`, which
    puts the caller's back."""
    warnings.resetwarnings()
    for action, category, module in reversed(FRESH_FILTERS):
        warnings.filterwarnings(action, category=category, module=module)
    options = [option for option in os.environ.get("PYTHONWARNINGS", "").split(",") if option]
    vars(warnings)["_processoptions"](options)  # how Python reads -W and PYTHONWARNINGS (no public name)
    warnings.showwarning = _to_stderr


def _to_stderr(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Python's own `showwarning` (a test runner replaces what it calls)."""
    with contextlib.suppress(OSError):
        (file or sys.stderr).write(warnings.formatwarning(message, category, filename, lineno, line))


@contextlib.contextmanager
def process_state_kept() -> Iterator[None]:
    """What a command changes in the process that runs it, put back as it was (see the module's docstring)."""
    streams, hooks = (sys.stdin, sys.stdout, sys.stderr), (sys.excepthook, sys.unraisablehook)
    handlers = signal_handlers()
    wakeup = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(wakeup)
    environ, cwd = dict(os.environ), os.getcwd()
    root = logging.getLogger()
    root_handlers, root_level = list(root.handlers), root.level
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else None
    with warnings.catch_warnings():  # the filters and `showwarning` a command's `fresh_warnings` set, put back
        try:
            yield
        finally:
            sys.stdin, sys.stdout, sys.stderr = streams
            sys.excepthook, sys.unraisablehook = hooks
            for signum, handler in handlers.items():
                if signal.getsignal(signum) is not handler:
                    signal.signal(signum, handler)
            signal.set_wakeup_fd(wakeup)
            os.environ.clear()
            os.environ.update(environ)
            os.chdir(cwd)
            root.handlers[:] = root_handlers
            root.setLevel(root_level)
            if torch is not None and threads is not None:
                torch.set_num_threads(threads)


def signal_handlers() -> dict[int, Any]:
    """Every signal's handler that Python can set again (one set outside Python reads as None and is left out)."""
    handlers: dict[int, Any] = {}
    for signum in signal.valid_signals():
        with contextlib.suppress(OSError, ValueError):
            if (handler := signal.getsignal(signum)) is not None:
                handlers[signum] = handler
    return handlers

"""The `ragbench` command's entry point (the console script, `python -m ragbench`). Its first act is to make
SIGTERM and SIGHUP stop the command as Ctrl-C does, before the command line and the run's modules load
(a visible part of its start): a stop signal then ends in one line at any moment (here, while loading: nothing
was written), never in a silent exit 143, nor dropped because it came inside a finalizer (the import system's
module-lock clean-up: the command then ran to its end and exited 0). A signal whose exception the import of an extension module
swallowed (C code that clears errors) ends the command all the same, by the watcher of `exit_when_stuck`.
The process ends with the command, whatever a plugin left running (ragbench._cli.process_end).
Its console is guarded from the start (ragbench._cli.console): a full or closed stdout or stderr ends in one
line and an exit code, never a traceback, and never stops the command's work."""

from __future__ import annotations

from .._stop_signals import exit_if_stopped, exit_when_stuck, stop_as_ctrl_c, stopped_starting
from .console import guard_console, with_console_checked


def main() -> None:
    stop_as_ctrl_c()
    streams = guard_console()
    try:
        with exit_when_stuck(stopped_starting):
            from .main import main as command
            from .process_end import end_process
    except (KeyboardInterrupt, RuntimeError) as exc:
        exit_if_stopped(exc, stopped_starting)
        raise
    end_process(with_console_checked(command, streams))

"""The `ragbench` command's entry point (the console script, `python -m ragbench`). Its first act is to make
SIGTERM and SIGHUP stop the command as Ctrl-C does, before the command line loads (~0.1 s, and the run's
modules another ~0.2 s): a stop signal then ends in one line at any moment (here, while loading: nothing
was written), never in a silent exit 143."""
from __future__ import annotations

import signal
import sys

from .._stop_signals import STOP_SIGNALS, raise_stopped, signal_of, stopped_starting


def main() -> None:
    for signum in STOP_SIGNALS:
        if signum != signal.SIGINT:  # Ctrl-C raises KeyboardInterrupt already
            signal.signal(signum, raise_stopped)
    try:
        from .main import main as command
    except KeyboardInterrupt as exc:
        sys.stderr.write(stopped_starting(signal_of(exc)))
        sys.exit(128 + signal_of(exc))
    command()

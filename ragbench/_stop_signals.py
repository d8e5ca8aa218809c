"""The signals that stop a command (Ctrl-C, SIGTERM, SIGHUP) and the exception they raise. Imports nothing
heavy: the command's entry point (ragbench._cli.entry) installs the handler before anything else loads."""
from __future__ import annotations

import signal
from typing import Any

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP: stops a run as Ctrl-C does (a KeyboardInterrupt, so code that stops on Ctrl-C
    stops on it)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


def raise_stopped(signum: int, frame: Any) -> None:
    raise Stopped(signum)


def signal_of(exc: BaseException) -> int:
    """The signal that stopped a run (SIGINT for a plain KeyboardInterrupt)."""
    return getattr(exc, "signum", signal.SIGINT)


def stopped_by(signum: int) -> str:
    return "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"


def stopped_starting(signum: int) -> str:
    """The line of a command stopped before it began its work."""
    return f"\nragbench: {stopped_by(signum)} while starting; nothing was written: run the command again\n"

"""The signals that stop a command (Ctrl-C, SIGTERM, SIGHUP), the exception they raise, and the watcher that
ends a command a signal could not stop. Imports nothing heavy: the command's entry point
(ragbench._cli.entry) installs the handler before anything else loads."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP: stops a run as Ctrl-C does (a KeyboardInterrupt, so code that stops on Ctrl-C
    stops on it). The command raises it for Ctrl-C as well: CPython ends a process by SIGINT itself, whatever
    exit code it was given, once a plain KeyboardInterrupt has left code run by `exec` (a dataclass's
    generated methods, while the command's modules load), even when the command caught it."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


def raise_stopped(signum: int, frame: Any) -> None:
    raise Stopped(signum)


def raise_stop(signum: int) -> None:
    """What a stop signal raises while a run's handler is installed: KeyboardInterrupt for Ctrl-C, `Stopped`
    for the others."""
    raise KeyboardInterrupt() if signum == signal.SIGINT else Stopped(signum)


def raised_by_stop_signal(exc: BaseException) -> bool:
    """Whether `exc` was raised by a stop signal's handler (`raise_stopped`, `raise_stop`): its innermost
    frame is the handler's. A plugin's own `raise KeyboardInterrupt` is not (ragbench._plugin_calls)."""
    last = exc.__traceback__
    while last is not None and last.tb_next is not None:
        last = last.tb_next
    return last is not None and last.tb_frame.f_code in (raise_stopped.__code__, raise_stop.__code__)


def signal_of(exc: BaseException) -> int:
    """The signal that stopped a run (SIGINT for a plain KeyboardInterrupt)."""
    return getattr(exc, "signum", signal.SIGINT)


def stop_signal_in(exc: BaseException) -> int | None:
    """The stop signal whose exception `exc` is, or wraps: Python 3.11 wraps an exception raised while a class
    is made (a dataclass field's `__set_name__`, as the command's modules load) in a RuntimeError. None when
    `exc` is neither."""
    if isinstance(exc, RuntimeError) and isinstance(exc.__cause__, KeyboardInterrupt):
        exc = exc.__cause__
    return signal_of(exc) if isinstance(exc, KeyboardInterrupt) else None


def exit_if_stopped(exc: BaseException, message: Callable[[int], str]) -> None:
    """When `exc` is a stop signal's exception (`stop_signal_in`): `message(signal)` on stderr, then exit
    128 + the signal. Otherwise it returns, for the caller to raise `exc` again."""
    signum = stop_signal_in(exc)
    if signum is not None:
        sys.stderr.write(message(signum))
        sys.exit(128 + signum)


def stopped_by(signum: int) -> str:
    return "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"


def stopped_starting(signum: int) -> str:
    """The line of a command stopped before it began its work."""
    return f"\nragbench: {stopped_by(signum)} while starting; nothing was written: run the command again\n"


@contextmanager
def exit_when_stuck(message: Callable[[int], str], grace: float = 1.0) -> Iterator[None]:
    """For the whole of a command: SIGTERM and SIGHUP stop it as Ctrl-C does (`Stopped`, a
    KeyboardInterrupt; by default they would end the process with no word and no clean-up). A stop
    signal while the main thread is stuck in native code (a model loading, a long tokenizer call) is
    seen by a watcher thread (`signal.set_wakeup_fd` writes the signal as it arrives), as is one whose
    exception native code swallowed; when the main thread has not ended the process `grace` seconds
    later, the watcher prints `message(signal)` and exits (128 + the signal). Files are written line by
    line and flushed, so nothing finished is lost; the worker processes end with this process
    (ragbench._run.workers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read, write = os.pipe()
    os.set_blocking(write, False)
    previous = signal.set_wakeup_fd(write)
    handlers = {signum: signal.signal(signum, raise_stopped) for signum in STOP_SIGNALS if signum != signal.SIGINT}

    def watch() -> None:
        with os.fdopen(read, "rb", buffering=0) as signals:
            for number in iter(lambda: signals.read(1), b""):
                if number[0] in STOP_SIGNALS:
                    time.sleep(grace)
                    sys.stderr.write(message(number[0]))
                    sys.stderr.flush()
                    os._exit(128 + number[0])

    threading.Thread(target=watch, name="ragbench-interrupt-watch", daemon=True).start()
    previous_hook = sys.unraisablehook

    def stop_again(unraisable: Any) -> None:
        """A stop signal's exception raised inside a finalizer (a weakref callback, a `__del__`) is printed
        and dropped by Python: the signal is sent again, from a thread, so that it stops the command once
        the main thread is out of the finalizer (and again should it land in another one)."""
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            threading.Timer(0.01, signal.raise_signal, (signal_of(unraisable.exc_value),)).start()
            return
        previous_hook(unraisable)

    sys.unraisablehook = stop_again
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(previous)
        os.close(write)  # the watcher reads the end of the pipe and returns

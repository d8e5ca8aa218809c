"""The signals that stop a command (Ctrl-C, SIGTERM, SIGHUP), the exception they raise, and the watcher that
ends a command a signal could not stop. Imports nothing heavy: the command's entry point
(ragbench._cli.entry) installs the handler before anything else loads.

They act on the ragbench process alone. A process a plugin forks (`os.fork`, multiprocessing's fork) is the
plugin's: it gets back the handlers and the wake-up fd ragbench replaced (`StopHandler`, reset at fork), so a
signal sent to it ends it as it would have, never the run (it raised `Stopped` in the child, and wrote to
the watcher's channel, which the child shared: a SIGTERM to a plugin's helper ended a complete run with 143).
A process forked by C code, where no at-fork hook runs, still shares the channel: the watcher reads who wrote
each signal and acts only on the process's own (`_WakeUpChannel`)."""

from __future__ import annotations

import importlib.machinery
import os
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

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


class StopHandler:
    """A stop signal's handler ragbench installed (`install_stop_handler`): `action`, and what it replaced (the
    handler; for the watcher's, the wake-up fd too), which a forked child gets back (`_as_before_in_child`). A
    signal that comes while an extension module initialises is acted on once it has (`in_extension_init`)."""

    def __init__(self, action: Callable[[int, Any], Any], replaced: Any, wakeup_replaced: int | None = None) -> None:
        self.action, self.replaced, self.wakeup_replaced = action, replaced, wakeup_replaced

    def __call__(self, signum: int, frame: Any) -> Any:
        if in_extension_init(frame):
            deliver_again(signum)
            return None
        return self.action(signum, frame)


_EXTENSION_INIT = tuple(
    getattr(importlib.machinery.ExtensionFileLoader, step).__code__ for step in ("create_module", "exec_module")
)


def in_extension_init(frame: Any) -> bool:
    """Whether `frame` runs within an extension module's initialisation. C code there may not expect the Python it
    calls to raise: orjson 3.8's crashed the process (SIGSEGV, no word) when a stop signal's exception came out of
    its import of `uuid`, as `ragbench` started."""
    while frame is not None:
        if frame.f_code in _EXTENSION_INIT:
            return True
        frame = frame.f_back
    return False


def deliver_again(signum: int) -> None:
    """The signal sent again shortly, from a thread: the main thread acts on it where it is by then."""
    timer = threading.Timer(0.01, signal.raise_signal, (signum,))
    timer.daemon = True
    timer.start()


def stop_as_ctrl_c() -> None:
    """A command's first act (ragbench._cli.entry): SIGTERM and SIGHUP raise `Stopped` as Ctrl-C raises
    KeyboardInterrupt (Ctrl-C too, see `Stopped`), and one dropped inside a finalizer is sent again, for the
    whole command, between its phases too (`stop_again_after_finalizers`)."""
    for signum in STOP_SIGNALS:
        install_stop_handler(signum, raise_stopped)
    stop_again_after_finalizers()


def stop_again_after_finalizers() -> Any:
    """From now on, a stop signal's exception raised inside a finalizer (a weakref callback such as the import
    system's module-lock clean-up, a `__del__`), which Python prints and drops, sends the signal again from a
    thread: it stops the command once the main thread is out of the finalizer (and again should it land in
    another one). Returns the `sys.unraisablehook` it wraps; calling it again does not wrap twice."""
    previous_hook = sys.unraisablehook
    if isinstance(previous_hook, _StopAgain):
        return previous_hook
    sys.unraisablehook = _StopAgain(previous_hook)
    return previous_hook


class _StopAgain:
    """The unraisable hook of `stop_again_after_finalizers`; any other unraisable goes to `previous`."""

    def __init__(self, previous: Callable[[Any], Any]) -> None:
        self.previous = previous

    def __call__(self, unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            deliver_again(signal_of(unraisable.exc_value))
            return
        self.previous(unraisable)


def install_stop_handler(signum: int, action: Callable[[int, Any], Any], wakeup_replaced: int | None = None) -> Any:
    """`signal.signal(signum, action)`, remembering what it replaces for a forked child; returns that."""
    return signal.signal(signum, StopHandler(action, signal.getsignal(signum), wakeup_replaced))


def _as_before_in_child() -> None:
    """In a process forked from this one: the stop signals' handlers and the wake-up fd as they were before
    ragbench installed its own (the child is a plugin's helper, not the run)."""
    wakeup = None
    for signum in STOP_SIGNALS:
        handler = signal.getsignal(signum)
        while isinstance(handler, StopHandler):
            wakeup = handler.wakeup_replaced if handler.wakeup_replaced is not None else wakeup
            handler = handler.replaced
        if handler is not signal.getsignal(signum):
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    if wakeup is not None:
        signal.set_wakeup_fd(wakeup)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_as_before_in_child)


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
    (ragbench._run.lifetime.workers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    channel = _WakeUpChannel()
    previous = signal.set_wakeup_fd(channel.write)
    handlers = {
        signum: install_stop_handler(signum, raise_stopped, wakeup_replaced=previous)
        for signum in STOP_SIGNALS
        if signum != signal.SIGINT
    }

    def watch() -> None:
        for number in channel.own_signals():
            if number in STOP_SIGNALS:
                time.sleep(grace)
                sys.stderr.write(message(number))
                sys.stderr.flush()
                os._exit(128 + number)

    threading.Thread(target=watch, name="ragbench-interrupt-watch", daemon=True).start()
    previous_hook = stop_again_after_finalizers()
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(previous)
        channel.close()  # the watcher reads its end and returns


class _WakeUpChannel:
    """Where the interpreter writes the number of each signal as it arrives (`signal.set_wakeup_fd(write)`), and
    who wrote it: on Linux each message carries its sender's pid (SO_PASSCRED), and `own_signals` yields only
    this process's; elsewhere a plain socket pair, whose senders are not known."""

    def __init__(self) -> None:
        try:
            self._reader, self._writer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self._reader.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        except (AttributeError, OSError):  # not Linux
            self._reader, self._writer = socket.socketpair()
        self._writer.setblocking(False)
        self.write = self._writer.fileno()

    def own_signals(self) -> Iterator[int]:
        """The signals this process received, until `close`."""
        space = socket.CMSG_SPACE(struct.calcsize("3i")) if hasattr(socket, "CMSG_SPACE") else 0
        with self._reader:
            while True:
                number, ancillary, _, _ = self._reader.recvmsg(1, space)
                if not number:
                    return
                senders = [
                    struct.unpack("3i", payload)[0]
                    for level, kind, payload in ancillary
                    if (level, kind) == (socket.SOL_SOCKET, getattr(socket, "SCM_CREDENTIALS", None))
                ]
                if all(sender == os.getpid() for sender in senders):
                    yield number[0]

    def close(self) -> None:
        """The reader sees the end, even while a forked child holds a copy of the writing end."""
        try:
            self._writer.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self._writer.close()

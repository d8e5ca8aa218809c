"""A run's lifetime: its examples, run as one task group that ends before anything is torn down; and how it stops on Ctrl-C, SIGTERM or SIGHUP: at once,
saying what is saved (the evaluator's samples are written line by line, so nothing finished is lost)
and the command that continues it."""
from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Iterator

from .._stop_signals import STOP_SIGNALS, Stopped, raise_stopped, signal_of, stopped_by, stopped_starting

EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT (128 + the signal's number)


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, SIGHUP) during a run: what was finished is saved in the run folder;
    `--resume` continues. A KeyboardInterrupt, so code that stops on Ctrl-C stops on it."""

    def __init__(self, run_dir: Path, saved: int, total: int | None, signum: int = signal.SIGINT) -> None:
        self.run_dir, self.saved, self.total, self.signum = run_dir, saved, total, signum
        super().__init__(f"{stopped_by(signum)}: {saved}{'' if total is None else f' of {total}'} examples "
                         f"saved in {run_dir}")


async def run_together(coroutines: Iterable[Awaitable[Any]]) -> None:
    """Run the coroutines as one task group: the first that raises cancels the others, and every one
    has ended before this returns or raises (cancelled from outside, it cancels them all and waits for
    them too). asyncio.TaskGroup does this from Python 3.11 on; this is the same, written once for
    every supported Python, raising the first error itself rather than an ExceptionGroup (the command
    line reports it in one line)."""
    tasks = [asyncio.ensure_future(coroutine) for coroutine in coroutines]
    if not tasks:
        return
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        await _end_all(tasks)
    errors = {task: task.exception() for task in tasks if not task.cancelled()}  # every error retrieved
    first = next((errors[task] for task in done if errors.get(task) is not None), None)
    if first is not None:
        raise first


async def _end_all(tasks: list[asyncio.Future]) -> None:
    """Cancel the tasks and wait until each has ended, even if this is cancelled meanwhile (then raised
    again once they have)."""
    for task in tasks:
        task.cancel()
    cancelled = False
    while pending := [task for task in tasks if not task.done()]:
        try:
            await asyncio.wait(pending)
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError


def run_interruptible(coro: Any) -> Any:
    """Run the run's coroutine; Ctrl-C, SIGTERM or SIGHUP cancels it (its `finally` waits for the
    examples to end, then closes files and streams) and raises KeyboardInterrupt (`Stopped` for
    SIGTERM and SIGHUP) at once, without waiting for engine calls still running in worker threads (a
    batch of generation can take many seconds; closing the loop's executor would wait for it). A
    second signal stops at once."""
    loop = asyncio.new_event_loop()
    main = loop.create_task(coro)
    signalled: list[int] = []

    def on_signal(signum: int, frame: Any) -> None:
        if signalled:  # a second signal: stop now
            raise KeyboardInterrupt if signum == signal.SIGINT else Stopped(signum)
        signalled.append(signum)
        loop.call_soon_threadsafe(main.cancel)

    in_main = threading.current_thread() is threading.main_thread()
    previous = {signum: signal.signal(signum, on_signal) for signum in STOP_SIGNALS} if in_main else {}
    try:
        result = loop.run_until_complete(main)
    except BaseException:
        if not main.done():  # a KeyboardInterrupt or SystemExit left the loop: the run's `finally` still runs
            main.cancel()
            try:
                loop.run_until_complete(main)
            except BaseException:
                pass
        if signalled:  # the loop stays open: closing it waits for the worker threads
            # and is left as it is, with what still runs in it: nothing of that is reported when collected
            loop.set_exception_handler(lambda _loop, _context: None)
            raise (KeyboardInterrupt() if signalled[0] == signal.SIGINT else Stopped(signalled[0])) from None
        _cancel_pending(loop)  # as asyncio.run does: every task's `finally` runs (files closed, cost saved)
        _close_loop(loop)
        raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    _close_loop(loop)
    if signalled:  # it came as the run's task ended, too late to cancel it: it stops the command all the same
        raise KeyboardInterrupt() if signalled[0] == signal.SIGINT else Stopped(signalled[0])
    return result


def _cancel_pending(loop: asyncio.AbstractEventLoop) -> None:
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.run_until_complete(loop.shutdown_default_executor())
    loop.close()


@contextmanager
def exit_when_stuck(message: Callable[[int], str], grace: float = 1.0) -> Iterator[None]:
    """For the whole of a command: SIGTERM and SIGHUP stop it as Ctrl-C does (`Stopped`, a
    KeyboardInterrupt; by default they would end the process with no word and no clean-up). A stop
    signal while the main thread is stuck in native code (a model loading, a long tokenizer call) is
    seen by a watcher thread (`signal.set_wakeup_fd` writes the signal as it arrives); when the main
    thread has not ended the process `grace` seconds later, the watcher prints `message(signal)` and
    exits (128 + the signal). Files are written line by line and flushed, so nothing finished is lost; the
    worker processes end with this process (ragbench._run.workers)."""
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


def interrupt_message(run_dir: Any, saved: int | None = None, total: int | None = None,
                      signum: int = signal.SIGINT) -> str:
    """What Ctrl-C (or SIGTERM, SIGHUP) left: nothing (no run folder yet), or how many examples are saved
    and the command that continues the run (this one, `sys.argv`, with --resume)."""
    import shlex

    from .._storage.rundir import RunDir

    if run_dir is None or not (Path(run_dir) / "run.json").is_file():
        return stopped_starting(signum)
    run_dir = Path(run_dir)
    if saved is None:
        saved = sum(len(RunDir(run_dir).finished_keys(p.stem)) for p in (run_dir / "samples").glob("*.jsonl"))
    args = [a for a in sys.argv[1:] if a not in ("--resume", "--overwrite")]
    return (f"\nragbench: {stopped_by(signum)}: {saved}{'' if total is None else f' of {total}'} examples saved "
            f"in {run_dir}; continue with:\n  {shlex.join(['ragbench', *args, '--resume'])}\n")


def exit_interrupted(exc: RunInterrupted) -> None:
    """Ctrl-C, SIGTERM or SIGHUP during a run (the command line): what is saved and the command that
    continues; then exit at once (128 + the signal; engine threads still generating are not waited for:
    their examples run again on --resume)."""
    sys.stdout.flush()
    sys.stderr.write(interrupt_message(exc.run_dir, exc.saved, exc.total, exc.signum))
    sys.stderr.flush()
    os._exit(128 + exc.signum)

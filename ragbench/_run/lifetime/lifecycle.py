"""A run's lifetime: its examples, run as one task group that ends before anything is torn down; and how it
stops on Ctrl-C, SIGTERM or SIGHUP: at once (what it says then: ragbench._run.lifetime.interrupted)."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Awaitable, Iterable, Sequence
from typing import Any

from ..._stop_signals import STOP_SIGNALS, Stopped, install_stop_handler, raise_stop


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


async def _end_all(tasks: Sequence[asyncio.Future[Any]]) -> None:
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
    try:
        loop = asyncio.new_event_loop()
    except BaseException:  # no file for its wake-up pipe (too many open files): the run never began
        coro.close()
        raise
    main = loop.create_task(coro)
    signalled: list[int] = []

    def on_signal(signum: int, frame: Any) -> None:
        if signalled:  # a second signal: stop now (raised by `raise_stop`: a plugin's guard lets it through)
            raise_stop(signum)
        signalled.append(signum)
        loop.call_soon_threadsafe(main.cancel)

    in_main = threading.current_thread() is threading.main_thread()
    previous = {signum: install_stop_handler(signum, on_signal) for signum in STOP_SIGNALS} if in_main else {}
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

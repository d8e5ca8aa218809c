"""How an application's code is called from the run's event loop, where every other example's calls wait.

A sync function runs in a thread of its own (`in_thread`), a daemon thread started for the call, with the caller's
context (contextvars: the OpenTelemetry context whose root span its spans join): never on the loop, never in the
loop's default executor (a few threads, which a slow application would fill), and never holding the process at its
exit (an application that never returns is left behind when the run ends; a thread pool's workers would be joined).

A coroutine runs on the loop, stepped through `Stepped`, which measures the longest stretch it ran without giving
the loop back (`longest`): an async application that calls blocking code holds every other example still, which
the system reports instead of leaving it to show only as a slow run.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")


async def in_thread(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`function(*args, **kwargs)` in a daemon thread of its own, in a copy of the caller's context; its result or
    what it raised. Cancelling the wait leaves the thread to end on its own (Python cannot stop it)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: T | None, error: BaseException | None) -> None:
        if done.done():  # the caller stopped waiting
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]  # a T: `error` is None

    def run() -> None:
        try:
            result = context.run(function, *args, **kwargs)
        except BaseException as exc:
            try:
                loop.call_soon_threadsafe(settle, None, exc)
            except RuntimeError:  # the loop closed: the run ended without this call
                pass
            return
        try:
            loop.call_soon_threadsafe(settle, result, None)
        except RuntimeError:
            pass

    threading.Thread(target=run, name="ragbench-app-call", daemon=True).start()
    return await done


class Stepped:
    """`await Stepped(coroutine)`: the coroutine awaited, each stretch it runs between two awaits timed; `longest`,
    the longest such stretch in seconds (how long it held the event loop at once)."""

    def __init__(self, coroutine: Coroutine[Any, Any, T]) -> None:
        self.coroutine = coroutine
        self.longest = 0.0

    def __await__(self) -> Generator[Any, Any, Any]:
        coroutine = self.coroutine
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            started = time.perf_counter()
            try:
                yielded = coroutine.send(sent) if thrown is None else coroutine.throw(thrown)
            except StopIteration as stop:
                self.longest = max(self.longest, time.perf_counter() - started)
                return stop.value
            finally:
                self.longest = max(self.longest, time.perf_counter() - started)
            try:
                sent, thrown = (yield yielded), None
            except BaseException as exc:
                sent, thrown = None, exc

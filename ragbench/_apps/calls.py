"""How an application's code is called from the run's event loop, where every other example's calls wait.

A sync function runs in a thread of its own (`in_thread`), a daemon thread started for the call, with the caller's
context (contextvars: the OpenTelemetry context whose root span its spans join): never on the loop, never in the
loop's default executor (a few threads, which a slow application would fill), and never holding the process at its
exit (an application that never returns is left behind when the run ends; a thread pool's workers would be joined).

A coroutine runs on the loop, stepped through `Stepped`, which measures the longest stretch it ran without giving
the loop back: an async application that calls blocking code holds every other example still, which the system
reports instead of leaving it to show only as a slow run. The tasks the coroutine starts are measured too, into the
same `LoopHolds` (a framework runs a user's async code in tasks of its own: LangChain's `ainvoke`, Haystack's
`run_async`): `timing_tasks` puts a task factory on the loop that steps each task started within a call.
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


class LoopHolds:
    """The longest stretch, in seconds, that one call's coroutine or a task it started ran without giving the loop
    back."""

    def __init__(self) -> None:
        self.longest = 0.0


_HOLDS: contextvars.ContextVar[LoopHolds | None] = contextvars.ContextVar("ragbench_app_loop_holds", default=None)


class Stepped:
    """`await Stepped(coroutine, holds)`: the coroutine awaited, each stretch it runs between two awaits timed into
    `holds`; every task it starts (on a loop `timing_tasks` set up) is timed into `holds` too."""

    def __init__(self, coroutine: Coroutine[Any, Any, T], holds: LoopHolds) -> None:
        self.coroutine = coroutine
        self.holds = holds

    def __await__(self) -> Generator[Any, Any, Any]:
        coroutine, holds = self.coroutine, self.holds
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            started = time.perf_counter()
            token = _HOLDS.set(holds)  # the tasks this stretch starts inherit it
            try:
                yielded = coroutine.send(sent) if thrown is None else coroutine.throw(thrown)
            except StopIteration as stop:
                return stop.value
            finally:
                _HOLDS.reset(token)
                holds.longest = max(holds.longest, time.perf_counter() - started)
            try:
                sent, thrown = (yield yielded), None
            except BaseException as exc:
                sent, thrown = None, exc


async def _stepped_task(coroutine: Coroutine[Any, Any, T], holds: LoopHolds) -> T:
    result: T = await Stepped(coroutine, holds)
    return result


TaskFactory = Callable[..., "asyncio.Future[Any]"]


class _TimingTasks:
    """The loop's task factory while application calls run on it: a task started within a call (its context holds
    the call's `LoopHolds`) runs its coroutine through `Stepped`; any other task is made as the loop made it."""

    def __init__(self, previous: TaskFactory | None) -> None:
        self.previous = previous

    def __call__(self, loop: asyncio.AbstractEventLoop, coroutine: Any, **kwargs: Any) -> asyncio.Future[Any]:
        context = kwargs.get("context")
        holds = context.get(_HOLDS) if context is not None else _HOLDS.get()
        if holds is not None and asyncio.iscoroutine(coroutine):
            coroutine = _stepped_task(coroutine, holds)
        if self.previous is not None:
            return self.previous(loop, coroutine, **kwargs)
        return asyncio.Task(coroutine, loop=loop, **kwargs)


def timing_tasks(loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    """Put the task factory that times application calls' tasks on `loop` (over the one it had); the function that
    takes it off again (where nothing replaced it since)."""
    previous = loop.get_task_factory()
    if isinstance(previous, _TimingTasks):
        return lambda: None
    factory = _TimingTasks(previous)
    loop.set_task_factory(factory)

    def restore() -> None:
        if loop.get_task_factory() is factory:
            loop.set_task_factory(previous)

    return restore

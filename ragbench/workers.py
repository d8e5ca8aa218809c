"""One process pool for the CPU-bound work of a run, so that the event loop never blocks.

HTML parsing, sentence splitting, JSON parsing of large records, tokenisation for truncation: a
call to such a function holds the GIL for tens of milliseconds to seconds, and on the loop (or in a
thread of this process) it would stall every other example's LLM calls. `await run(fn, *args)`
runs it in a worker process instead. The pool is shared by every task and system of the process,
started lazily on first use with one worker per usable core, warmed (each worker imports the
modules named by `warm()` once, not per call), built with the `forkserver` start method where
there is one (`spawn` elsewhere), so that it is safe in a process that already runs threads (the
engines' and the cache's), and shut down by `shutdown()` at the end of a run (the evaluator calls
it; an `atexit` hook catches the rest). `fn` and its arguments must be picklable: module-level
functions only.

`RAGBENCH_WORKERS=N` sets the pool size; `RAGBENCH_WORKERS=0` runs the work in a thread of this
process instead (debugging, or a platform without working subprocesses).
"""
from __future__ import annotations

import asyncio
import atexit
import importlib
import multiprocessing
import os
import threading
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from functools import partial
from typing import Any, Callable, TypeVar

T = TypeVar("T")
WORKERS_ENV = "RAGBENCH_WORKERS"

_lock = threading.Lock()
_executor: Executor | None = None
_warm_modules: set[str] = set()


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def pool_size() -> int:
    """Workers of the pool: $RAGBENCH_WORKERS, else one per usable core."""
    value = os.environ.get(WORKERS_ENV, "").strip()
    return int(value) if value.isdigit() else usable_cores()


def warm(*modules: str) -> None:
    """Name modules every worker imports when it starts (e.g. "bs4", "blingfire"); a pool that is
    already running imports them on its next start."""
    _warm_modules.update(modules)


def _import_all(modules: tuple[str, ...]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:  # the call that needs it reports the missing package
            pass


def executor() -> Executor:
    """The shared pool, started (and its workers warmed) on first use."""
    global _executor
    with _lock:
        if _executor is None:
            size = pool_size()
            if size == 0:
                _executor = ThreadPoolExecutor(1, thread_name_prefix="ragbench-cpu")
            else:
                method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
                _executor = ProcessPoolExecutor(size, mp_context=multiprocessing.get_context(method),
                                                initializer=_import_all, initargs=(tuple(sorted(_warm_modules)),))
                for _ in range(size):  # start every worker now, not one per first call
                    _executor.submit(int)
        return _executor


def start() -> None:
    """Start the pool now (e.g. while data loads), so that the first page does not wait for it."""
    executor()


async def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a worker process, awaited without blocking the loop."""
    call = partial(fn, *args, **kwargs) if kwargs else fn
    return await asyncio.get_running_loop().run_in_executor(executor(), call, *([] if kwargs else args))


def submit(fn: Callable[..., T], *args: Any):
    """`fn(*args)` in a worker process from synchronous code (a reader thread): a Future."""
    return executor().submit(fn, *args)


def running() -> bool:
    return _executor is not None


def shutdown() -> None:
    """Stop the workers (queued work is cancelled); the next call starts a fresh pool."""
    global _executor
    with _lock:
        pool, _executor = _executor, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


atexit.register(shutdown)

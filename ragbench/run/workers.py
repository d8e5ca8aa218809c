"""One process pool for the CPU-bound work of a run, so that the event loop never blocks.

HTML parsing, sentence splitting, JSON parsing of large records, tokenisation for truncation: a
call to such a function holds the GIL for tens of milliseconds to seconds, and on the loop (or in a
thread of this process) it would stall every other example's LLM calls. `await run(fn, *args)`
runs it in a worker process instead. The pool is shared by every task and system of the process,
started lazily on first use with one worker per usable core at a lower CPU priority (niceness
+5: the loop and the engines' threads come first), warmed (each worker imports the modules named
by `warm()` once, not per call), built with the `forkserver` start method where
there is one (`spawn` elsewhere), so that it is safe in a process that already runs threads (the
engines' and the cache's), and shut down by `shutdown()` at the end of a run (the evaluator calls
it; an `atexit` hook catches the rest). `fn` and its arguments must be picklable: module-level
functions only, and a script that starts a run must guard its top level with
`if __name__ == "__main__":` (the workers import the main module, as with `spawn`).

Records are parsed in a lane of their own (`in_record_lane`: one more worker process, at normal
priority): every example starts from a record, so parsing the next one must not wait in the pool's
queue behind the page work of the examples already started (it did: a Task 3 run read its archive
only between two questions' page parsing, 2.2x its CPU floor instead of overlapping the two).
`start_soon()` starts the lane and the pool in a background thread, so that a reader need not wait
for them (it parses its first records itself meanwhile: `lane_ready()`).

A worker that cannot start (a script without the `__main__` guard re-runs its run in every worker:
`refuse_in_worker_start` stops such a worker quietly) makes the pool unusable: the next call raises
`WorkersUnavailable`, one line saying why, and the run stops. A pool that breaks later (a worker
killed, e.g. out of memory) fails the call that was running and is replaced for the next one.

`RAGBENCH_WORKERS=N` sets the pool size; `RAGBENCH_WORKERS=0` runs the work in a thread of this
process instead (debugging, or a platform without working subprocesses). `RAGBENCH_WORKERS_NICE`
sets the workers' niceness (default 5; 0 on a machine shared with other jobs, where +5 gives the
workers a third of a core's share against each of them).
"""
from __future__ import annotations

import asyncio
import atexit
import importlib
import multiprocessing
import os
import sys
import threading
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, TypeVar

from ..errors import ConfigError

T = TypeVar("T")
WORKERS_ENV = "RAGBENCH_WORKERS"

_lock = threading.Lock()
_executor: Executor | None = None
_records: Executor | None = None  # the record-parsing lane
_warm_modules: set[str] = set()
_unavailable: "WorkersUnavailable | None" = None  # why the pool could not start (until shutdown())


class WorkersUnavailable(ConfigError):
    """The worker processes could not start: the run cannot go on (one line says why)."""


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


NICENESS_ENV = "RAGBENCH_WORKERS_NICE"


def _init_worker(modules: tuple[str, ...], lowered: bool = True) -> None:
    """Lower the worker's priority (throughput work must not take the core the event loop and the
    engines' threads need to stay responsive), then import the warm modules."""
    try:
        if lowered:
            os.nice(int(os.environ.get(NICENESS_ENV, "5")))
    except (AttributeError, OSError):  # not POSIX
        pass
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:  # the call that needs it reports the missing package
            pass


def _start(size: int, lowered: bool) -> Executor:
    if size == 0:
        return ThreadPoolExecutor(1, thread_name_prefix="ragbench-cpu")
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":  # the server imports them once; every worker forks warm from it
        context.set_forkserver_preload(sorted(_warm_modules))
    pool = ProcessPoolExecutor(size, mp_context=context, initializer=_init_worker,
                               initargs=(tuple(sorted(_warm_modules)), lowered))
    started = [pool.submit(int) for _ in range(size)]  # start every worker now, not one per first call
    try:
        for future in started:
            future.result()
    except BrokenProcessPool:
        pool.shutdown(wait=False, cancel_futures=True)
        raise WorkersUnavailable(_why_unavailable()) from None
    return pool


def _why_unavailable() -> str:
    main = sys.modules.get("__main__")
    script = getattr(main, "__file__", None) if getattr(main, "__spec__", None) is None else None
    fallback = f"or set {WORKERS_ENV}=0 to do this work in a thread of this process"
    if script:
        return (f"the worker processes stopped while starting: each one imports the script that started this "
                f"run ({script}), which must keep its top level under `if __name__ == \"__main__\":` "
                f"(as multiprocessing requires), {fallback}")
    return f"the worker processes stopped while starting (killed, or out of memory?); {fallback}"


def refuse_in_worker_start() -> None:
    """Called where a run starts: in a worker process still importing the main script (forkserver and
    spawn run it as `__mp_main__`), a script without the `__main__` guard would start a second run
    (and pool) in every worker. Stop the worker quietly instead; the run says why (`_why_unavailable`).
    `_inheriting` is what multiprocessing's own check for this case reads (spawn._check_not_importing_main)."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise SystemExit(1)


def raise_if_unavailable() -> None:
    """Raise `WorkersUnavailable` when the workers could not start (the evaluator stops the run)."""
    if _unavailable is not None:
        raise WorkersUnavailable(str(_unavailable))


def _started(size: int, lowered: bool) -> Executor:
    """`_start`, remembering a failure so that later calls fail at once with the same line (caller holds _lock)."""
    global _unavailable
    raise_if_unavailable()
    try:
        return _start(size, lowered)
    except WorkersUnavailable as exc:
        _unavailable = exc
        raise


def executor() -> Executor:
    """The shared pool, started (and its workers warmed) on first use."""
    global _executor
    pool = _executor
    if pool is not None:  # not waiting on the lock while the record lane starts
        return pool
    with _lock:
        if _executor is None:
            _executor = _started(pool_size(), lowered=True)
        return _executor


def _record_lane() -> Executor:
    global _records
    lane = _records
    if lane is not None:  # not waiting on the lock while the pool starts
        return lane
    with _lock:
        if _records is None:
            _records = _started(min(1, pool_size()), lowered=False)
        return _records


_starting: threading.Thread | None = None
_starting_lock = threading.Lock()


def start_soon() -> None:
    """Start the pool and the record lane in a background thread (once; a failure is raised by the
    next call that needs them)."""
    global _starting
    with _starting_lock:  # not _lock: held for the whole start, and the caller must not wait
        if _starting is not None or _unavailable is not None:
            return
        _starting = threading.Thread(target=_start_both, name="ragbench-workers-start", daemon=True)
        _starting.start()


def prestart() -> None:
    """`start_soon()` when a loaded plugin named warm modules (it parses in the pool): called when a
    run starts, after its pre-flight, so that the workers start while the engines load, not when the
    first page waits for them."""
    if _warm_modules and pool_size():
        start_soon()


def _start_both() -> None:
    """The pool first: page work waits for it, while records are parsed in the reader until the lane is up."""
    try:
        executor()
        _record_lane()
    except WorkersUnavailable:  # remembered: raised by the next call
        pass


def lane_ready() -> bool:
    """Whether the record lane is running; if it is not, it is started (`start_soon`)."""
    if _records is not None:
        return True
    start_soon()
    return False


def in_record_lane(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in the record-parsing lane (one process, or a thread under RAGBENCH_WORKERS=0), from
    synchronous code (the reader thread). A lane whose process died is replaced; this call then runs
    `fn` here."""
    lane = _record_lane()
    try:
        return lane.submit(fn, *args).result()
    except BrokenProcessPool:
        _discard_broken(lane)
        return fn(*args)


async def run(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in a worker process, awaited without blocking the loop."""
    if _executor is None:  # starting processes blocks for a while: not on the loop
        await asyncio.to_thread(executor)
    pool = executor()
    try:
        return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)
    except BrokenProcessPool:
        _discard_broken(pool)
        raise


def _discard_broken(pool: Executor) -> None:
    """A worker of the pool or the lane died (killed, out of memory): it is unusable; the next call
    starts a new one."""
    global _executor, _records
    with _lock:
        if _executor is pool:
            _executor = None
        if _records is pool:
            _records = None
    pool.shutdown(wait=False, cancel_futures=True)


def ready_threads(size: int | None = None) -> ThreadPoolExecutor:
    """A thread pool with all its threads started (for the loop's default executor): a pool that
    starts a thread inside `submit` makes the submitting loop wait for the new thread to run."""
    size = size or min(32, usable_cores() + 4)  # ThreadPoolExecutor's own default
    pool = ThreadPoolExecutor(size, thread_name_prefix="ragbench-io")
    gate = threading.Barrier(size)
    for future in [pool.submit(gate.wait) for _ in range(size)]:
        future.result()
    return pool


async def use_ready_threads() -> ThreadPoolExecutor:
    """Give the running loop a default executor whose threads are already started (started in a
    thread); the caller shuts it down when the loop ends."""
    pool = await asyncio.to_thread(ready_threads)
    asyncio.get_running_loop().set_default_executor(pool)
    return pool


def running() -> bool:
    return _executor is not None


def shutdown() -> None:
    """Stop the workers and the record lane (queued work is cancelled); the next call starts afresh."""
    global _executor, _records, _starting, _unavailable
    starting = _starting
    if starting is not None:
        starting.join()
    with _lock:
        pools, _executor, _records, _starting, _unavailable = (_executor, _records), None, None, None, None
    for pool in pools:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


atexit.register(shutdown)

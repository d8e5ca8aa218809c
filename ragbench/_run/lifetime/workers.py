"""A run's worker processes for CPU-bound work, so that the event loop never blocks.

HTML parsing, sentence splitting, JSON parsing of large records, tokenisation for truncation: a
call to such a function holds the GIL for tens of milliseconds to seconds, and on the loop (or in a
thread of this process) it would stall every other example's LLM calls. `await workers.run(fn,
*args)` runs it in a worker process instead. Each run owns one `Workers` (ragbench._run.lifetime.resources:
`ctx.resources.workers`), shared by every task, system and metric of that run and closed by it;
two runs in one process have a pool each, and one's end never touches the other's. The pool starts
lazily on first use (or while the engines load, `prestart`) with one worker per usable core at a
lower CPU priority (niceness +5: the loop and the engines' threads come first), warmed (each worker
imports the modules named by `warm()` once, not per call), built with the `forkserver` start method
where there is one (`spawn` elsewhere), so that it is safe in a process that already runs threads
(the engines' and the cache's). `fn` and its arguments must be picklable: module-level functions
only, and a script that starts a run must guard its top level with `if __name__ == "__main__":`
(the workers import the main module, as with `spawn`).

Records are parsed in a lane of their own (`in_record_lane`: one more worker process, at normal
priority): every example starts from a record, so parsing the next one must not wait in the pool's
queue behind the page work of the examples already started (it did: a Task 3 run read its archive
only between two questions' page parsing, twice its CPU floor instead of overlapping the two).
`start_soon()` starts the lane and the pool in a background thread, so that a reader need not wait
for them (it parses its first records itself meanwhile: `lane_ready()`).

A worker that cannot start (a script without the `__main__` guard re-runs its run in every worker:
`refuse_in_worker_start` stops such a worker quietly) makes the pool unusable: the next call raises
`WorkersUnavailable`, one line saying why, and the run stops. A pool that breaks later (a worker
killed, e.g. out of memory) fails the calls it was running and is replaced for the next one, on
every path into it (`run`, `in_record_lane`).

Every worker ends when the process that started it ends, however it ends (kill -9 included): a
thread of the worker waits on a pidfd of that process (`_exit_with`). On Linux with the forkserver
(docs/internals.md, "Who owns what"): without it the workers, the forkserver and multiprocessing's
resource tracker all outlive a killed run (they hold each other's pipes open); `prctl(PR_SET_PDEATHSIG)`
in the workers does not help (their parent is the forkserver, which lives on); with the pidfd every one
of them is gone at once (the forkserver and the tracker end when the last worker holding their pipes
does).

`RAGBENCH_WORKERS=N` sets the pool size; `RAGBENCH_WORKERS=0` runs the work in a thread of this
process instead (debugging, or a platform without working subprocesses). `RAGBENCH_WORKERS_NICE`
sets the workers' niceness (default 5; 0 on a machine shared with other jobs, where +5 gives the
workers a third of a core's share against each of them).
"""

from __future__ import annotations

import asyncio
import importlib
import multiprocessing
import os
import select
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from ..._errors import ConfigError
from ..._values.environment import WORKERS as WORKERS_ENV
from ..._values.environment import niceness_in_environment, workers_in_environment

T = TypeVar("T")


class WorkersUnavailable(ConfigError):
    """The worker processes could not start: the run cannot go on (one line says why)."""


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def pool_size() -> int:
    """Workers of the pool: $RAGBENCH_WORKERS, else one per usable core."""
    size = workers_in_environment()
    return usable_cores() if size is None else size


def _exit_with(pid: int) -> None:
    """End this process when process `pid` ends: wait on a pidfd of it (Linux 5.3+), else look every
    second whether it is there."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):  # no pidfd here
        while True:
            try:
                os.kill(pid, 0)
            except (ProcessLookupError, PermissionError):  # PermissionError: the pid is another user's now
                os._exit(1)
            time.sleep(1.0)
    select.select([handle], [], [])  # readable when the process has ended
    os._exit(1)


def _init_worker(modules: tuple[str, ...], lowered: bool, run_pid: int) -> None:
    """Tie the worker's life to the run's process, lower its priority (throughput work must not take
    the core the event loop and the engines' threads need to stay responsive), then import the warm
    modules."""
    threading.Thread(target=_exit_with, args=(run_pid,), name="ragbench-exit-with-run", daemon=True).start()
    try:
        if lowered:
            os.nice(niceness_in_environment(default=5))
    except (AttributeError, OSError):  # not POSIX
        pass
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:  # the call that needs it reports the missing package
            pass


def _why_unavailable() -> str:
    main = sys.modules.get("__main__")
    script = getattr(main, "__file__", None) if getattr(main, "__spec__", None) is None else None
    fallback = f"or set {WORKERS_ENV}=0 to do this work in a thread of this process"
    if script:
        return (
            f"the worker processes stopped while starting: each one imports the script that started this "
            f'run ({script}), which must keep its top level under `if __name__ == "__main__":` '
            f"(as multiprocessing requires), {fallback}"
        )
    return f"the worker processes stopped while starting (killed, or out of memory?); {fallback}"


def refuse_in_worker_start() -> None:
    """Called where a run starts: in a worker process still importing the main script (forkserver and
    spawn run it as `__mp_main__`), a script without the `__main__` guard would start a second run
    (and pool) in every worker. Stop the worker quietly instead; the run says why (`_why_unavailable`).
    `_inheriting` is what multiprocessing's own check for this case reads (spawn._check_not_importing_main)."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise SystemExit(1)


class Workers:
    """One run's process pool and record lane (see the module docstring); `close()` ends them."""

    def __init__(self, size: int | None = None) -> None:
        self.size = pool_size() if size is None else size
        self._modules: set[str] = set()
        self._lock = threading.Lock()  # held while a pool or the lane starts
        self._pool: Executor | None = None
        self._lane: Executor | None = None  # the record-parsing lane
        self._unavailable: WorkersUnavailable | None = None  # why the workers could not start
        self._starting: threading.Thread | None = None
        self._starting_lock = threading.Lock()  # not _lock, held for a whole start: a caller must not wait
        self._closed = False

    def warm(self, *modules: str) -> None:
        """Name modules every worker imports when it starts (e.g. "bs4", "blingfire"); a pool that is
        already running imports them on its next start."""
        self._modules.update(modules)

    @property
    def started(self) -> bool:
        return self._pool is not None

    def raise_if_unavailable(self) -> None:
        """Raise `WorkersUnavailable` when the workers could not start (the evaluator stops the run)."""
        if self._unavailable is not None:
            raise WorkersUnavailable(str(self._unavailable))

    def _start(self, size: int, lowered: bool) -> Executor:
        """A started pool (every worker up); a failure is remembered, so later calls fail at once with
        the same line (caller holds _lock)."""
        self.raise_if_unavailable()
        if self._closed:
            raise RuntimeError("this run's worker processes are closed (the run has ended)")
        if size == 0:
            return ThreadPoolExecutor(1, thread_name_prefix="ragbench-cpu")
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        context = multiprocessing.get_context(method)
        modules = tuple(sorted(self._modules))
        if method == "forkserver":  # the server imports them once (when it starts); workers fork warm from it
            context.set_forkserver_preload(list(modules))
        pool = ProcessPoolExecutor(
            size, mp_context=context, initializer=_init_worker, initargs=(modules, lowered, os.getpid())
        )
        try:
            for future in [pool.submit(int) for _ in range(size)]:  # every worker started now, not on first calls
                future.result()
        except BrokenProcessPool:
            pool.shutdown(wait=False, cancel_futures=True)
            self._unavailable = WorkersUnavailable(_why_unavailable())
            raise self._unavailable from None
        except OSError:  # no process started (the forkserver refused: it ended meanwhile): not remembered,
            pool.shutdown(wait=False, cancel_futures=True)  # the next call starts them again
            raise
        return pool

    def _executor(self, lane: bool) -> Executor:
        """The pool (or the lane), started on first use."""
        running = self._lane if lane else self._pool
        if running is not None:  # not waiting on the lock while the other one starts
            return running
        with self._lock:
            if lane:
                if self._lane is None:
                    self._lane = self._start(min(1, self.size), lowered=False)
                return self._lane
            if self._pool is None:
                self._pool = self._start(self.size, lowered=True)
            return self._pool

    def _submit(self, lane: bool, fn: Callable[..., T], *args: Any) -> tuple[Executor, Future[T]]:
        """`fn(*args)` submitted to the pool (or the lane)."""
        executor = self._executor(lane)
        try:
            return executor, executor.submit(fn, *args)
        except BrokenProcessPool:  # a worker died while it was idle: nothing of this call ran; a new pool runs it
            self._discard(executor)
        executor = self._executor(lane)
        return executor, executor.submit(fn, *args)

    def _discard(self, executor: Executor) -> None:
        """A worker of the pool or the lane died (killed, out of memory): it is unusable; the next call
        starts a new one."""
        with self._lock:
            if self._pool is executor:
                self._pool = None
            if self._lane is executor:
                self._lane = None
        executor.shutdown(wait=False, cancel_futures=True)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in a worker process, awaited without blocking the loop."""
        if self._pool is None:  # starting processes blocks for a while: not on the loop
            await asyncio.to_thread(self._executor, False)
        executor, future = self._submit(False, fn, *args)
        try:
            return await asyncio.wrap_future(future)
        except BrokenProcessPool:
            self._discard(executor)
            raise

    def in_record_lane(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in the record-parsing lane (one process, or a thread under RAGBENCH_WORKERS=0), from
        synchronous code (the reader thread). A lane whose process died while running it is replaced;
        this call then runs `fn` here, as does a call after the run closed its workers."""
        if self._closed:
            return fn(*args)
        executor, future = self._submit(True, fn, *args)
        try:
            return future.result()
        except BrokenProcessPool:
            self._discard(executor)
            return fn(*args)

    def start_soon(self) -> None:
        """Start the pool and the record lane in a background thread (once; a failure is raised by the
        next call that needs them)."""
        with self._starting_lock:
            if self._starting is not None or self._unavailable is not None or self._closed:
                return
            self._starting = threading.Thread(target=self._start_both, name="ragbench-workers-start", daemon=True)
            self._starting.start()

    def prestart(self) -> None:
        """`start_soon()` when a plugin of the run named warm modules (it parses in the pool): called when
        a run starts, after its pre-flight, so that the workers start while the engines load, not when
        the first page waits for them."""
        if self._modules and self.size:
            self.start_soon()

    def _start_both(self) -> None:
        """The pool first: page work waits for it, while records are parsed in the reader until the lane is up."""
        try:
            self._executor(lane=False)
            self._executor(lane=True)
        except (WorkersUnavailable, RuntimeError, OSError):  # the next call that needs them starts them or says why
            pass

    def lane_ready(self) -> bool:
        """Whether the record lane is running; if it is not, it is started (`start_soon`)."""
        if self._lane is not None:
            return True
        self.start_soon()
        return False

    def close(self, wait: bool = True) -> None:
        """End the pool and the lane (queued work is cancelled). `wait=False` (an interrupted run) does
        not wait for the calls still running: their workers are stopped. Later calls fail (`run`) or
        run in place (`in_record_lane`)."""
        with self._starting_lock:
            self._closed = True
            starting = self._starting
        if starting is not None and wait:
            starting.join()
        with self._lock:
            executors, self._pool, self._lane = (self._pool, self._lane), None, None
        for executor in executors:
            if executor is not None:
                _end(executor, wait)


def _end(executor: Executor, wait: bool) -> None:
    """Shut a pool down; `wait=False`: its workers are stopped first (SIGTERM), so that it ends at once
    and completely (a pool left running at exit makes multiprocessing's resource tracker warn of leaked
    semaphores on the console). ProcessPoolExecutor has no public way to do that before Python 3.14."""
    if not wait:
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            process.terminate()
    executor.shutdown(wait=True, cancel_futures=True)


def ready_threads(size: int | None = None) -> ThreadPoolExecutor:
    """A thread pool with all its threads started (for the loop's default executor): a pool that
    starts a thread inside `submit` makes the submitting loop wait for the new thread to run."""
    size = size or min(32, usable_cores() + 4)  # ThreadPoolExecutor's own default
    pool = ThreadPoolExecutor(size, thread_name_prefix="ragbench-io")
    gate = threading.Barrier(size)
    try:
        futures = [pool.submit(gate.wait) for _ in range(size)]
    except RuntimeError:  # a thread could not start (out of memory or threads): those started wait no more
        gate.abort()
        pool.shutdown(wait=True)
        raise
    for future in futures:
        future.result()
    return pool


async def use_ready_threads() -> ThreadPoolExecutor:
    """Give the running loop a default executor whose threads are already started (started in a
    thread); the caller shuts it down when the loop ends."""
    pool = await asyncio.to_thread(ready_threads)
    asyncio.get_running_loop().set_default_executor(pool)
    return pool

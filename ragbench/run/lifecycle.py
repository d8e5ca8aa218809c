"""A run's engines, loaded and closed together, and how a run stops on Ctrl-C: at once, saying what is
saved (the evaluator's samples are written line by line, so nothing finished is lost)."""
from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: what was finished is saved in the run folder; `--resume` continues. A
    KeyboardInterrupt, so code that stops on Ctrl-C stops on it."""

    def __init__(self, run_dir: Path, saved: int, total: int | None) -> None:
        self.run_dir, self.saved, self.total = run_dir, saved, total
        super().__init__(f"interrupted: {saved}{'' if total is None else f' of {total}'} examples saved in {run_dir}")


@dataclass
class Engines:
    """The engines of a run, loaded after the pre-flight and before the run folder."""

    model: Any = None
    roles: dict[str, Any] = field(default_factory=dict)
    judges: list[Any] = field(default_factory=list)
    nli: Any = None

    def close(self) -> None:
        for engine in (self.model, *self.judges, *self.roles.values(),
                       *([self.nli] if self.nli is not self.model else [])):
            if engine is not None:
                engine.close()


def run_interruptible(coro: Any) -> Any:
    """Run the run's coroutine; Ctrl-C cancels it (its `finally` closes files and streams) and raises
    KeyboardInterrupt at once, without waiting for engine calls still running in worker threads (a
    batch of generation can take many seconds; closing the loop's executor would wait for it)."""
    loop = asyncio.new_event_loop()
    main = loop.create_task(coro)
    interrupted = threading.Event()

    def on_sigint(signum: int, frame: Any) -> None:
        if interrupted.is_set():  # a second Ctrl-C: stop now
            raise KeyboardInterrupt
        interrupted.set()
        loop.call_soon_threadsafe(main.cancel)

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_sigint) if in_main else None
    try:
        result = loop.run_until_complete(main)
    except BaseException:
        if not main.done():  # a KeyboardInterrupt or SystemExit left the loop: the run's `finally` still runs
            main.cancel()
            try:
                loop.run_until_complete(main)
            except BaseException:
                pass
        if interrupted.is_set():  # the loop stays open: closing it waits for the worker threads
            raise KeyboardInterrupt from None
        _cancel_pending(loop)  # as asyncio.run does: every task's `finally` runs (files closed, cost saved)
        _close_loop(loop)
        raise
    finally:
        if in_main:
            signal.signal(signal.SIGINT, previous)
    _close_loop(loop)
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
def exit_when_stuck(message: Callable[[], str], grace: float = 1.0) -> Iterator[None]:
    """Ctrl-C while the main thread is stuck in native code (a model loading, a long tokenizer call)
    is seen by a watcher thread (`signal.set_wakeup_fd` writes the signal as it arrives); when the main
    thread has not ended the process `grace` seconds later, the watcher prints `message()` and exits
    (130). Files are written line by line and flushed, so nothing finished is lost."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read, write = os.pipe()
    os.set_blocking(write, False)
    previous = signal.set_wakeup_fd(write)

    def watch() -> None:
        with os.fdopen(read, "rb", buffering=0) as signals:
            for number in iter(lambda: signals.read(1), b""):
                if number[0] == signal.SIGINT:
                    time.sleep(grace)
                    sys.stderr.write(message())
                    sys.stderr.flush()
                    os._exit(EXIT_INTERRUPTED)

    threading.Thread(target=watch, name="ragbench-interrupt-watch", daemon=True).start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        os.close(write)  # the watcher reads the end of the pipe and returns


def interrupt_message(run_dir: Any, saved: int | None = None, total: int | None = None) -> str:
    """What Ctrl-C left: nothing (no run folder yet), or how many examples are saved and the command
    that continues the run (this one, `sys.argv`, with --resume)."""
    import shlex

    from ..storage.rundir import RunDir

    if run_dir is None or not (Path(run_dir) / "run.json").is_file():
        return "\nragbench: interrupted before the run started; nothing was written\n"
    run_dir = Path(run_dir)
    if saved is None:
        saved = sum(len(RunDir(run_dir).finished_keys(p.stem)) for p in (run_dir / "samples").glob("*.jsonl"))
    args = [a for a in sys.argv[1:] if a not in ("--resume", "--overwrite")]
    return (f"\nragbench: interrupted: {saved}{'' if total is None else f' of {total}'} examples saved in "
            f"{run_dir}; continue with:\n  {shlex.join(['ragbench', *args, '--resume'])}\n")


def exit_interrupted(exc: RunInterrupted) -> None:
    """Ctrl-C during a run (the command line): what is saved and the command that continues; then exit
    at once (engine threads still generating are not waited for: their examples run again on --resume)."""
    sys.stdout.flush()
    sys.stderr.write(interrupt_message(exc.run_dir, exc.saved, exc.total))
    sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)

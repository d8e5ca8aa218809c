"""What a run stopped by Ctrl-C, SIGTERM or SIGHUP says: what is saved (the evaluator's samples are written
line by line, so nothing finished is lost) and the command that continues it. Imports nothing heavy: the
command line loads it before the run's modules, to report a stop while they load."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from ..._stop_signals import stopped_by, stopped_starting


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, SIGHUP) during a run: what was finished is saved in the run folder;
    `--resume` continues. A KeyboardInterrupt, so code that stops on Ctrl-C stops on it."""

    def __init__(self, run_dir: Path, saved: int, total: int | None, signum: int = signal.SIGINT) -> None:
        self.run_dir, self.saved, self.total, self.signum = run_dir, saved, total, signum
        super().__init__(
            f"{stopped_by(signum)}: {saved}{'' if total is None else f' of {total}'} examples saved in {run_dir}"
        )


def interrupt_message(
    run_dir: Any, saved: int | None = None, total: int | None = None, signum: int = signal.SIGINT
) -> str:
    """What Ctrl-C (or SIGTERM, SIGHUP) left: nothing (no run folder yet), or how many examples are saved
    and the command that continues the run (this one, `sys.argv`, with --resume)."""
    import shlex

    from ..._storage.rundir import RunDir
    from ..modes.planned_run import finished_keys

    if run_dir is None or not (Path(run_dir) / "run.json").is_file():
        return stopped_starting(signum)
    run_dir = Path(run_dir)
    if saved is None:
        saved = sum(len(finished_keys(RunDir(run_dir), p.stem)) for p in (run_dir / "samples").glob("*.jsonl"))
    args = [a for a in sys.argv[1:] if a not in ("--resume", "--overwrite")]
    return (
        f"\nragbench: {stopped_by(signum)}: {saved}{'' if total is None else f' of {total}'} examples saved "
        f"in {run_dir}; continue with:\n  {shlex.join(['ragbench', *args, '--resume'])}\n"
    )


def exit_interrupted(exc: RunInterrupted) -> None:
    """Ctrl-C, SIGTERM or SIGHUP during a run (the command line): what is saved and the command that
    continues; then exit at once (128 + the signal; engine threads still generating are not waited for:
    their examples run again on --resume)."""
    sys.stdout.flush()
    sys.stderr.write(interrupt_message(exc.run_dir, exc.saved, exc.total, exc.signum))
    sys.stderr.flush()
    os._exit(128 + exc.signum)

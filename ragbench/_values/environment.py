"""Settings read from environment variables: a deadline ($RAGBENCH_RAY_TIMEOUT, $RAGBENCH_RAY_PLACEMENT_TIMEOUT,
$RAGBENCH_STORAGE_TIMEOUT, $RAGBENCH_STORE_LOCK_LEASE: a finite number of seconds above 0), the worker pool's size
and niceness ($RAGBENCH_WORKERS, $RAGBENCH_WORKERS_NICE) and whether replaced files are flushed ($RAGBENCH_FSYNC:
on or off). A value that is none of these is one line naming the variable and its value: `environment_problems`
lists those of the pool and the flushes for the pre-flight and the command line, so that a typo is refused before
any work, never read as the default; a deadline is checked where it is read."""

from __future__ import annotations

import os

from .._errors import ConfigError, one_line_text, shown_value

FSYNC = "RAGBENCH_FSYNC"
WORKERS = "RAGBENCH_WORKERS"
WORKERS_NICE = "RAGBENCH_WORKERS_NICE"
NICENESS = range(-20, 20)  # what os.nice can reach (below 0 only with the privilege to raise priority)


def shown_setting(text: str) -> str:
    """A setting's value as a refusal shows it: cut short, its line breaks and other unprintable characters
    escaped (`of\\nf`), so that the refusal stays one line."""
    return one_line_text(shown_value(text))


def seconds_in_environment(variable: str, default: float) -> float:
    """The finite number of seconds above 0 that $`variable` gives, else `default`; a ConfigError of one line
    naming the variable and its value where it gives anything else."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise ConfigError(f"{variable}={shown_setting(text)}: a number of seconds above 0 (default {default:g})")
    return seconds


def flushes_to_disk() -> bool:
    """$RAGBENCH_FSYNC: replaced files are flushed unless it is `off`. A value neither `on` nor `off` flushes (the
    safe side) where it is read mid-write; the pre-flight refuses it (`environment_problems`)."""
    return os.environ.get(FSYNC, "").strip().lower() != "off"


def _integer(variable: str) -> int | None:
    text = os.environ.get(variable, "").strip()
    try:
        return int(text, 10) if text else None
    except ValueError:
        return None


def workers_in_environment() -> int | None:
    """$RAGBENCH_WORKERS as a pool size (0: no pool, the work in a thread), None where unset or not a whole number."""
    value = _integer(WORKERS)
    return value if value is not None and value >= 0 else None


def niceness_in_environment(default: int) -> int:
    """$RAGBENCH_WORKERS_NICE, the workers' niceness, else `default` (where unset or out of os.nice's range)."""
    value = _integer(WORKERS_NICE)
    return value if value is not None and value in NICENESS else default


def environment_problems() -> list[str]:
    """One line for each of ragbench's settings in the environment whose value it cannot read."""
    problems = []
    fsync = os.environ.get(FSYNC, "").strip()
    if fsync and fsync.lower() not in ("on", "off"):
        problems.append(f"{FSYNC}={shown_setting(fsync)}: on or off (off skips flushing replaced files to disk)")
    workers = os.environ.get(WORKERS, "").strip()
    if workers and workers_in_environment() is None:
        problems.append(
            f"{WORKERS}={shown_setting(workers)}: a whole number of worker processes (0: the work in a thread of the run)"
        )
    nice = os.environ.get(WORKERS_NICE, "").strip()
    if nice and niceness_in_environment(default=NICENESS.stop) == NICENESS.stop:
        problems.append(f"{WORKERS_NICE}={shown_setting(nice)}: the workers' niceness, a whole number from -20 to 19")
    return problems

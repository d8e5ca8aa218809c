"""A deadline read from an environment variable ($RAGBENCH_RAY_TIMEOUT, $RAGBENCH_RAY_PLACEMENT_TIMEOUT,
$RAGBENCH_STORAGE_TIMEOUT): a finite number of seconds above 0, or one line naming the variable and its value."""

from __future__ import annotations

import os

from .._errors import ConfigError, shown_value


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
        raise ConfigError(f"{variable}={shown_value(text)}: a number of seconds above 0 (default {default:g})")
    return seconds

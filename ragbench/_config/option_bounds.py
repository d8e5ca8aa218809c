"""The ranges of a run's numeric options, checked before a run starts (each group's `problems()`,
ragbench._config) or as the command line is read: the least value of each and the bound of those that
would make that many of something."""

from __future__ import annotations

from typing import Any

MAX_BOOTSTRAP_ITERATIONS = 1_000_000  # rounds of a bootstrap (their statistics are kept: 8 MB), checked before a run
MAX_JUDGE_REPEATS = 100  # scorings of a judged example per judge (--judge-repeats), checked as the option is read
MAX_INFLIGHT = 10_000  # examples at once (--max-inflight): a worker each, started with the run

# What each of these bounds, and why it is enough
_AT_MOST = {
    "bootstrap_iters": (MAX_BOOTSTRAP_ITERATIONS, f"rounds (a p-value's resolution of 1/{MAX_BOOTSTRAP_ITERATIONS:,})"),
    "judge_repeats": (
        MAX_JUDGE_REPEATS,
        "scorings per judge (each is one more judge call per judged example; a judge's agreement with itself is "
        "measured with a few, 3 to 10)",
    ),
    "max_inflight": (
        MAX_INFLIGHT,
        "examples at once (each holds a worker and its example's data; a model server answers far fewer at once)",
    ),
}


def too_many(flag: str, field: str, value: int | None) -> str | None:
    """One line for a count over its bound (`field`: bootstrap_iters, judge_repeats or max_inflight), else None:
    checked before a run (or a comparison) starts what it would make that many of."""
    most, what = _AT_MOST[field]
    if isinstance(value, int) and value > most:
        return f"{flag} {value}: at most {most:,} {what}; give fewer"
    return None


def number_problem(flag: str, value: Any, least: int, alternative: str = "") -> str | None:
    """`--seed -5: give an integer of at least 0`, or None when `value` is an integer >= `least`."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= least:
        return None
    return f"{flag} {value}: give {'an integer of ' if not isinstance(value, int) else ''}at least {least}{alternative}"

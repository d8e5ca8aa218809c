"""`ragbench compare --fail-if-worse METRIC:DELTA`: the allowed deltas read (`parse_thresholds`) and the metrics of a
report that got worse by more (`regressions`), each in its own direction."""

from __future__ import annotations

import math

from ..._errors import ConfigError
from .comparison import Report


def parse_thresholds(items: tuple[str, ...]) -> dict[str, float]:
    """METRIC:DELTA items as {metric: delta}; a delta that is not a finite number of at least 0 (NaN or an
    infinity would let every run pass) is a ConfigError."""
    thresholds = {}
    for item in items:
        metric, _, delta = item.rpartition(":")
        try:
            thresholds[metric] = float(delta)
        except ValueError:
            metric = ""
        if not metric:
            raise ConfigError(f"--fail-if-worse {item}: expected METRIC:DELTA, e.g. match:0.01")
        if not math.isfinite(thresholds[metric]) or thresholds[metric] < 0:
            raise ConfigError(
                f"--fail-if-worse {item}: DELTA must be a finite number of at least 0 (how much worse "
                "is allowed), e.g. match:0.01"
            )
    return thresholds


def regressions(report: Report, thresholds: dict[str, float]) -> list[str]:
    """Metrics (over all shared examples) that got worse by more than their allowed delta, each in its
    own direction (lower hallucination is better)."""
    compared = {row.metric for row in report.rows}
    unknown = sorted(set(thresholds) - compared)
    if unknown:
        raise ConfigError(
            f"--fail-if-worse: {', '.join(unknown)} not among the compared metrics "
            f"({', '.join(sorted(compared)) or 'none'})"
        )
    neither = sorted({row.metric for row in report.rows if row.metric in thresholds and row.higher_is_better is None})
    if neither:
        raise ConfigError(
            f"--fail-if-worse: {', '.join(neither)} has no better direction (a descriptive figure, "
            "e.g. a length): give metrics whose values are better one way"
        )
    out = []
    for row in report.rows:
        if row.slice or row.metric not in thresholds:
            continue
        worse_by = -row.diff if row.higher_is_better else row.diff
        if worse_by > thresholds[row.metric]:
            out.append(
                f"{row.task} {row.metric}: {report.other.label} is worse by {worse_by:.4f} "
                f"(allowed {thresholds[row.metric]})"
            )
    return out

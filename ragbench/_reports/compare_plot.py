"""compare_N.png: the differences of one comparison with their intervals, a bar per task and metric."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .compare import Report


def plot(report: Report, path: Path) -> Path | None:
    """Differences with their intervals, one bar per task and metric (all shared examples)."""
    rows = [r for r in report.rows if not r.slice]
    if not rows:
        return None
    from .slice_plots import pyplot, save_figure

    plt = pyplot()
    figure, axes = plt.subplots(figsize=(max(6.0, 0.6 * len(rows) + 2), 4))
    positions = np.arange(len(rows))
    errors = [
        [max(0.0, r.diff - (r.ci95 or (r.diff, r.diff))[0]) for r in rows],
        [max(0.0, (r.ci95 or (r.diff, r.diff))[1] - r.diff) for r in rows],
    ]
    bars = axes.bar(
        positions,
        [r.diff for r in rows],
        yerr=errors,
        capsize=3,
        color=[
            "tab:gray"
            if r.higher_is_better is None or r.diff == 0
            else "tab:green"
            if (r.diff > 0) == r.higher_is_better
            else "tab:red"
            for r in rows
        ],
    )
    axes.bar_label(bars, [f"{r.diff:+.3f}\nn={r.n}" for r in rows], fontsize=6, padding=2)
    axes.set_ylabel("B - A (green: B better, red: worse, gray: neither)")
    axes.set_xticks(positions, [f"{r.task}\n{r.metric}" for r in rows], fontsize=7, rotation=45, ha="right")
    axes.axhline(0, color="black", linewidth=0.6)
    axes.set_title(f"B - A: {report.other.label} - {report.baseline.label} (95% paired bootstrap)")
    return save_figure(figure, path)

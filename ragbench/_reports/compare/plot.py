"""compare_N.png: the differences of one comparison with their intervals, a bar per task and metric; compare_cost.png:
every run's quality against its cost per correct answer, with the Pareto front
(ragbench._reports.compare.cost_table)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .comparison import Report, Run
from .cost_table import cost_rows


def plot(report: Report, path: Path) -> Path | None:
    """Differences with their intervals, one bar per task and metric (all shared examples)."""
    rows = [r for r in report.rows if not r.slice]
    if not rows:
        return None
    from ..results.slice_plots import pyplot, save_figure

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


def cost_plot(runs: list[Run], path: Path) -> Path | None:
    """Quality against cost per correct answer, a panel per task and key, each run a point and the Pareto front
    (`compare_cost`) joined by a line; None where no run has a placed point."""
    panels = [
        (task, key, unit, [row for row in rows if row.front is not None and row.per_correct(unit) is not None])
        for (task, key), (unit, rows) in cost_rows(runs).items()
    ]
    panels = [panel for panel in panels if panel[3]]
    if not panels:
        return None
    from ..results.slice_plots import pyplot, save_figure

    plt = pyplot()
    columns = min(3, len(panels))
    rows_n = -(-len(panels) // columns)
    figure, axes = plt.subplots(rows_n, columns, figsize=(4.5 * columns, 3.6 * rows_n), squeeze=False)
    for axis in axes.flat[len(panels) :]:
        axis.set_visible(False)
    for axis, (task, key, unit, points) in zip(axes.flat, panels):
        costs = [float(row.per_correct(unit) or 0.0) for row in points]
        values = [float(row.value or 0.0) for row in points]
        axis.scatter(costs, values, c=["tab:green" if row.front else "tab:gray" for row in points])
        for row, x, y in zip(points, costs, values):
            axis.annotate(row.run, (x, y), fontsize=6, textcoords="offset points", xytext=(3, 3))
        front = sorted((x, y) for row, x, y in zip(points, costs, values) if row.front)
        axis.plot([x for x, _ in front], [y for _, y in front], color="tab:green", linewidth=0.8)
        axis.set_xlabel("$ per correct answer" if unit == "usd" else "tokens per correct answer", fontsize=7)
        axis.set_ylabel(key, fontsize=7)
        axis.set_title(task, fontsize=8)
    figure.suptitle("quality vs cost (green: the Pareto front)", fontsize=9)
    return save_figure(figure, path)

"""compare_N.png: the differences of one comparison with their intervals, a bar per task and metric; compare_cost.png:
every run's quality against its cost per correct answer, with the Pareto front
(ragbench._cost.cost_table)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..._cost.cost_table import cost_rows
from .comparison import Comparison, Report, Run

UNTESTED = "lightgray"  # a row with too few shared examples to test (p_value None): neither better nor worse


def colour(row: Comparison) -> str:
    """Green where B is better, red where worse, gray where neither is (no direction, no difference) and light gray
    where the row was not tested (MIN_TESTED): its difference is no finding either way."""
    if row.p_value is None:
        return UNTESTED
    if row.higher_is_better is None or row.diff == 0:
        return "tab:gray"
    return "tab:green" if (row.diff > 0) == row.higher_is_better else "tab:red"


def plot(report: Report, path: Path) -> Path | None:
    """Differences with their intervals, one bar per task and metric (all shared examples). Each bar's label stands
    past the end of its interval, inside the axes, whose limits leave room for it (never over the title)."""
    rows = [r for r in report.rows if not r.slice]
    if not rows:
        return None
    from ..results.slice_plots import save_figure, subplots

    figure, axes = subplots(figsize=(max(6.0, 0.6 * len(rows) + 2), 4))
    positions = np.arange(len(rows))
    low = [min(r.diff, (r.ci95 or (r.diff, r.diff))[0]) for r in rows]
    high = [max(r.diff, (r.ci95 or (r.diff, r.diff))[1]) for r in rows]
    axes.bar(
        positions,
        [r.diff for r in rows],
        yerr=[[r.diff - lo for r, lo in zip(rows, low)], [hi - r.diff for r, hi in zip(rows, high)]],
        capsize=3,
        color=[colour(r) for r in rows],
        hatch=["//" if r.p_value is None else "" for r in rows],
    )
    for x, r, lo, hi in zip(positions, rows, low, high):
        below = r.diff < 0
        axes.annotate(
            f"{r.diff:+.3f}\nn={r.n}" + ("\nnot tested" if r.p_value is None else ""),
            (x, lo if below else hi),
            xytext=(0, -3 if below else 3),
            textcoords="offset points",
            ha="center",
            va="top" if below else "bottom",
            fontsize=6,
        )
    bottom, top = min(0.0, *low), max(0.0, *high)
    room = 0.3 * ((top - bottom) or 1.0)  # three lines of 6-point text on a 4-inch figure take under a fifth
    axes.set_ylim(bottom - (room if bottom < 0 or min(r.diff for r in rows) < 0 else 0.05 * room), top + room)
    axes.set_ylabel("B - A (green: B better, red: worse,\ngray: neither, hatched: not tested)")
    axes.set_xticks(positions, [f"{r.task}\n{r.metric}" for r in rows], fontsize=7, rotation=45, ha="right")
    axes.axhline(0, color="black", linewidth=0.6)
    axes.set_title(
        f"B - A (95% paired bootstrap)\nB = {report.other.label}, A = {report.baseline.label}", fontsize=9, wrap=True
    )
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
    from ..results.slice_plots import save_figure, subplots

    columns = min(3, len(panels))
    rows_n = -(-len(panels) // columns)
    figure, axes = subplots(rows_n, columns, figsize=(4.5 * columns, 3.6 * rows_n), squeeze=False)
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

"""The whole text of a `ragbench compare` report (`markdown`: what `--output` writes and `--full` prints): the runs, every
setting that differs, the budgets, each row with its slice rows and raw p-values, and what the p columns are."""

from __future__ import annotations

from ..._statistics.multiple_testing import METHODS
from ..results.config_diff import described, searched
from ..results.sampling_used import decoding_line
from ..results.schema import direction
from .comparison import MIN_TESTED, Report
from .like_for_like import budget_rows


def runs_line(report: Report) -> str:
    """What each run is: its system, engine and model (`described`)."""
    a, b = report.baseline, report.other
    return f"A = {a.label}: {described(a.config)}; B = {b.label}: {described(b.config)}"


def markdown(report: Report) -> str:
    lines = [
        f"## {report.other.label} vs {report.baseline.label} (A = {report.baseline.label}, the baseline; "
        f"B = {report.other.label})",
        "",
        runs_line(report),
        "",
        searched(report.baseline.config, report.other.config),
        "",
    ]
    lines += ["What differs (settings that change what is measured):", ""]
    lines += [f"- {d.line()}" for d in report.differences] or ["- nothing"]
    lines.append("")
    for task in dict.fromkeys(row.task for row in report.rows):
        decoded = decoding_line(task, report.baseline.results, report.other.results)
        lines += [decoded, ""] if decoded else []
    lines += [f"> warning: {w}" for w in report.warnings]
    if report.warnings:
        lines.append("")
    for task in dict.fromkeys(row.task for row in report.rows):
        lines += [
            f"Budget per example on {task}, measured from the traces:",
            "",
            *budget_rows(
                [(report.baseline.label, report.baseline.results), (report.other.label, report.other.results)], task
            ),
            "",
        ]
        reasons = list(dict.fromkeys(r for row in report.rows if row.task == task for r in row.unlike))
        if reasons:  # said once per task, where the table's column says "no"
            lines += [f"Not like for like on {task}: {'; '.join(reasons)}.", ""]
    lines += [
        "| task | metric | better | slice | n | A | B | B - A | like for like | 95% CI | p adj. | p raw | test |",
        "|---|---|---|---|---:|---:|---:|---:|---|---|---:|---:|---|",
    ]
    for row in report.rows:
        interval = f"[{row.ci95[0]:.4f}, {row.ci95[1]:.4f}]" if row.ci95 else "-"
        lines.append(
            f"| {row.task} | {row.metric} | {direction(row.higher_is_better)} | {row.slice or 'all'} | "
            f"{row.n} | {row.mean_a:.4f} | {row.mean_b:.4f} | {row.diff:+.4f} | {'no' if row.unlike else 'yes'} | "
            f"{interval} | {_p(row.p_adjusted)} | {_p(row.p_value)} | "
            f"{row.test if row.p_value is not None else '-'} |"
        )
    return "\n".join([*lines, "", p_values_note(report)]) + "\n"


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def p_values_note(report: Report) -> str:
    """What the p columns are, in one line under a comparison's table."""
    if report.tested == 0:
        return f"p: none, as no row has {MIN_TESTED} or more shared examples (too few to test)"
    adjustment = (
        "not adjusted for the number of comparisons"
        if report.p_adjustment == "none"
        else f"adjusted by {METHODS[report.p_adjustment]}'s method over the {report.tested} comparison(s) "
        "with a p-value shown with this one"
    )
    return (
        f"p: two-sided, {adjustment} (`p adj.`; `p raw` as tested alone); rows of fewer than {MIN_TESTED} "
        "shared examples have none (too few to test)"
    )

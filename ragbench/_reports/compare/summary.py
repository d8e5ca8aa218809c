"""What `ragbench compare` prints by default: one screen per comparison. Each run compared with the baseline gets
one like-for-like verdict (its reasons in short), the settings that differ in a line, the decoding settings as sent
that differ in another, what each run searched (retriever, index, shards) in a third, its warnings and the rows over all shared examples (no slice rows) with their adjusted
p-values; the whole report (every difference, the budgets, the slice rows, raw p-values: `compare.markdown`) is
written by `--output` or printed by `--full`."""

from __future__ import annotations

from ..._statistics.multiple_testing import METHODS
from ..results.config_diff import searched
from ..results.sampling_used import NOT_RECORDED, used
from ..results.schema import direction
from .comparison import MIN_TESTED, Comparison, Report
from .full_report import runs_line

SHOWN_TASKS = 2  # tasks whose like-for-like reasons a verdict names; the others are counted
WIDTH = 120  # characters of the line `differing_settings` fills; the settings it has no room for are counted


def summary(reports: list[Report], full_report: str, costs: list[str] | None = None) -> str:
    """The reports of one command in a screen; `full_report` says where the rest is ("compare.md", or how to
    print it); `costs`: the lines of every run's cost per correct answer and the Pareto front
    (ragbench._cost.cost_table.front_lines), whose whole table is in the full report."""
    parts = [_pair(report) for report in reports]
    slice_rows = sum(bool(row.slice) for report in reports for row in report.rows)
    rest = "every setting that differs, budgets, raw p-values" + (f", {slice_rows} slice rows" if slice_rows else "")
    rest += ", the cost table" if costs else ""
    end = [p_note(reports[0], slice_rows > 0), *(costs or []), f"the full report ({rest}): {full_report}"]
    return "\n".join([*parts, *end]) + "\n"


def p_note(report: Report, slices: bool) -> str:
    """What `p adj.` is, in one line: the family is every row tested, the full report's slice rows included."""
    if report.tested == 0:
        return f"p adj.: none, as no row has {MIN_TESTED} or more shared examples (too few to test)"
    if report.p_adjustment == "none":
        return "p adj.: two-sided, not adjusted for the number of comparisons"
    return (
        f"p adj.: two-sided, adjusted by {METHODS[report.p_adjustment]}'s method over the {report.tested} "
        "comparison(s) tested" + (" (the full report's slice rows included)" if slices else "")
    )


def verdict(report: Report) -> str:
    """One line: "like for like" or "not like for like", with each task's reasons (the first `SHOWN_TASKS`
    tasks'; the others counted). Like for like where the systems declare other budgets (measured the same, or
    not declared by one): it says which, so that no line below contradicts it."""
    reasons = {row.task: row.unlike for row in report.rows if row.unlike}
    if not reasons:
        declared = dict.fromkeys(d.key.rsplit(".", 1)[1] for d in report.differences if _declared_budget(d.key))
        return "like for like: yes" + (
            f" (as measured; the systems declare {', '.join(declared)} otherwise)" if declared else ""
        )
    named = [f"{task}: {', '.join(why)}" for task, why in list(reasons.items())[:SHOWN_TASKS]]
    more = len(reasons) - SHOWN_TASKS
    return "not like for like: " + "; ".join(named) + (f"; and {more} more task(s)" if more > 0 else "")


def differing_settings(report: Report) -> str:
    """The settings with a difference in one line of about `WIDTH` characters, by their top-level setting, a
    task's name left out: "settings that differ (12): system; system_config: flashrag_generator, max_iter and 5 more"; the decoding
    as sent has a line of its own (`decoding`), what the systems declare to share the verdict's (`verdict`)."""
    settings = [
        difference
        for difference in report.differences
        if difference.key.split(".")[0] != "sampling" and not _declared_budget(difference.key)
    ]
    if not settings:  # the decoding is `decoding`'s line
        return "settings that differ: none"
    tasks = {row.task for row in report.rows}
    named: list[tuple[str, str]] = []  # (top-level setting, the rest of its path: "" for the setting itself)
    for difference in settings:
        top, *rest = difference.key.split(".")
        entry = (top, ".".join(rest[1:] if rest and rest[0] in tasks else rest))
        if entry not in named:
            named.append(entry)
    head, shown = f"settings that differ ({len(settings)}): ", 1
    while shown < len(named) and len(head + _grouped(named[: shown + 1])) <= WIDTH:
        shown += 1
    more = len(named) - shown
    return head + _grouped(named[:shown]) + (f" and {more} more" if more else "")


def _declared_budget(key: str) -> bool:
    """A setting the like-for-like verdict weighs (run.json `like_for_like`: a system's declared budgets and prompt
    style), which the verdict's line speaks for, not the settings' line."""
    return key.split(".")[0] == "like_for_like"


def decoding(report: Report) -> str | None:
    """The decoding settings that differ between the runs' calls, as sent (results.json `sampling`), in one line;
    "the same" where both runs recorded theirs and none differs; None where neither run recorded any."""
    decoded = [difference for difference in report.differences if difference.key.split(".")[0] == "sampling"]
    if not decoded:
        recorded = any(used(run.results, row.task) for row in report.rows for run in (report.baseline, report.other))
        return "decoding as sent: the same in both runs" if recorded else None
    names = dict.fromkeys(
        "not recorded in one run" if NOT_RECORDED in (d.a, d.b) else d.key.rsplit(".", 1)[1] for d in decoded
    )
    return "decoding as sent that differs: " + ", ".join(names)


def _grouped(named: list[tuple[str, str]]) -> str:
    groups: dict[str, list[str]] = {}
    for top, rest in named:
        groups.setdefault(top, []).extend([rest] if rest else [])
    return "; ".join(top + (": " + ", ".join(rests) if rests else "") for top, rests in groups.items())


def _pair(report: Report) -> str:
    a, b = report.baseline.label, report.other.label
    lines = [f"## {b} vs {a} (A = {a}, the baseline; B = {b})", runs_line(report), verdict(report)]
    lines.append(differing_settings(report))
    lines += [line] if (line := decoding(report)) else []
    lines.append(searched(report.baseline.config, report.other.config))
    lines += [f"> warning: {warning}" for warning in report.warnings]
    lines += [
        "",
        "| task | metric | better | n | A | B | B - A | 95% CI | p adj. |",
        "|---|---|---|---:|---:|---:|---:|---|---:|",
        *(_row(row) for row in report.rows if not row.slice),
        "",
    ]
    return "\n".join(lines)


def _row(row: Comparison) -> str:
    interval = f"[{row.ci95[0]:.4f}, {row.ci95[1]:.4f}]" if row.ci95 else "-"
    p = "-" if row.p_adjusted is None else f"{row.p_adjusted:.4g}"
    return (
        f"| {row.task} | {row.metric} | {direction(row.higher_is_better)} | {row.n} | {row.mean_a:.4f} | "
        f"{row.mean_b:.4f} | {row.diff:+.4f} | {interval} | {p} |"
    )

"""What `ragbench gate` shows and writes: the table (Markdown, as the run's own), a note per key on the examples scored
worst or left out and on its judge, the one-line verdict, gate.json, and for GitHub Actions an annotation per
regression and the step summary."""

from __future__ import annotations

from typing import Literal, TypedDict

from ..results.schema import direction
from .pairing import FAILED_KEY, PairedKey
from .verdicts import GateReport, GateRow, worse_words

KIND = "ragbench gate"  # gate.json's `kind`: a file the gate may write over (no other)
VERSION = 1
Verdict = Literal["pass", "fail"]


class JudgeJson(TypedDict):
    judges: str
    against_humans: bool  # the judge's error against human labels counted in the test
    baseline_labelled: int | None  # the examples of each run with a human label (None: none)
    candidate_labelled: int | None
    baseline_mean_error: float | None  # each run's mean of human - judge on them
    candidate_mean_error: float | None


class RowJson(TypedDict):
    task: str
    metric: str
    better: str
    n: int
    baseline: float | None
    candidate: float | None
    delta: float | None
    ci95: list[float] | None
    worse_by: float | None
    test: str
    p: float | None
    adjusted: bool  # in Holm's family (false: no pair differs, p 1)
    p_holm: float | None
    verdict: Literal["regression", "pass", "not tested"]
    threshold: float | None
    threshold_verdict: Literal["fail", "pass"] | None
    scored_worst: dict[str, list[str]]
    left_out: dict[str, list[str]]
    judge: JudgeJson | None


class GateJson(TypedDict):
    kind: str
    version: int
    verdict: Verdict
    line: str
    baseline: str
    candidate: str
    alpha: float
    adjustment: str
    iterations: int
    seed: int
    min_effect: dict[str, float]
    thresholds: dict[str, float]
    tested: int
    adjusted_over: int  # the keys Holm's adjustment is over: tested, and some pair differs
    regressions: list[str]
    threshold_failures: list[str]
    rows: list[RowJson]
    notes: list[str]


def verdict(report: GateReport) -> Verdict:
    return "fail" if report.regressions else "pass"


def verdict_line(report: GateReport) -> str:
    """The one line a CI log shows: pass or FAIL, why, and what the fixed thresholds would have said."""
    alpha = report.settings.alpha
    family = (
        f"{report.tested} key(s) tested (Holm over the {len(report.family)} on which the runs differ, alpha {alpha:g})"
    )
    if report.regressions:
        worst = min(report.regressions, key=lambda row: row.p_holm or 0.0)
        line = (
            f"FAIL: {len(report.regressions)} significant regression(s) of {family}; "
            f"{_named(worst)} {worse_words(worst)} (Holm p {_p(worst.p_holm)})"
        )
    else:
        line = f"pass: no significant regression of {family}"
    judged = [row for row in report.rows if row.threshold is not None]
    if judged:
        failing = report.threshold_failures
        said = (
            "would FAIL on " + ", ".join(f"{_named(row)} ({worse_words(row)} > {row.threshold:g})" for row in failing)
            if failing
            else "would pass"
        )
        line += f"; the fixed threshold(s) {said}"
    return f"ragbench: gate {line}"


def _named(row: GateRow) -> str:
    return f"{row.task} {row.metric}"


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _row_verdict(row: GateRow) -> Literal["regression", "pass", "not tested"]:
    return "not tested" if row.p is None else "regression" if row.regression else "pass"


def table(report: GateReport) -> str:
    """The gate's Markdown table, a row per key tested."""
    lines = [
        "| task | metric | better | n | baseline | candidate | delta [95% CI] | p | Holm p | gate | fixed threshold |",
        "|---|---|---|---:|---:|---:|---|---:|---:|---|---|",
    ]
    for row in report.rows:
        interval = f" [{row.ci95[0]:+.4f}, {row.ci95[1]:+.4f}]" if row.ci95 else ""
        delta = "-" if row.delta is None else f"{row.delta:+.4f}{interval}"
        gate = {"regression": "**FAIL**", "pass": "pass", "not tested": "not tested"}[_row_verdict(row)]
        threshold = (
            "-"
            if row.threshold is None
            else f"{'**FAIL**' if row.threshold_fails else 'pass'} (allowed {row.threshold:g})"
        )
        lines.append(
            f"| {row.task} | {row.metric} | {direction(row.paired.higher_is_better)} | {row.n} | "
            f"{_number(row.baseline)} | {_number(row.candidate)} | {delta} | {_p(row.p)} | {_p(row.p_holm)} | "
            f"{gate} | {threshold} |"
        )
    return "\n".join(lines)


def notes(report: GateReport) -> list[str]:
    """A line per key whose examples were scored worst or left out, or that a judge scores; then the run's notes."""
    lines = []
    for row in report.rows:
        paired, parts = row.paired, []
        if paired.scored_worst.ids:
            parts.append(f"scored {_worst_of(paired)}: {'; '.join(paired.scored_worst.lines())}")
        if paired.left_out.ids:
            parts.append(f"left out: {'; '.join(paired.left_out.lines())}")
        if paired.judge is not None:
            parts.append(_judge_words(row))
        if row.p is not None and row.test.startswith("sign-flip"):
            parts.append(f"test: {row.test}, {report.settings.iterations} draws")
        if parts:
            lines.append(f"{_named(row)}: {'; '.join(parts)}")
    alike = [_named(row) for row in report.rows if row.p is not None and not row.adjusted]
    if alike:
        lines.append(
            f"no pair differs on {', '.join(alike)}: p 1, no chance to fail, so not among the keys Holm adjusts for"
        )
    return [*lines, *report.notes]


def _worst_of(paired: PairedKey) -> str:
    return "as failed (1)" if paired.key == FAILED_KEY else "at the key's worst value"


def _judge_words(row: GateRow) -> str:
    judge = row.paired.judge
    assert judge is not None
    if judge.baseline_errors is not None and judge.candidate_errors is not None:
        return (
            f"judged ({judge.judges}); the judge's error against human labels counted (labelled "
            f"{judge.baseline_errors.n} and {judge.candidate_errors.n}, mean human - judge "
            f"{judge.baseline_errors.mean:+.4f} and {judge.candidate_errors.mean:+.4f})"
        )
    return (
        f"judged ({judge.judges}); its error against human labels not measured in both runs (`--human-labels FILE` "
        "measures it), its random error per example is in the paired differences the test flips"
    )


def gate_json(report: GateReport) -> GateJson:
    return {
        "kind": KIND,
        "version": VERSION,
        "verdict": verdict(report),
        "line": verdict_line(report),
        "baseline": str(report.baseline),
        "candidate": str(report.candidate),
        "alpha": report.settings.alpha,
        "adjustment": "holm",
        "iterations": report.settings.iterations,
        "seed": report.settings.seed,
        "min_effect": dict(report.settings.min_effect),
        "thresholds": dict(report.settings.thresholds),
        "tested": report.tested,
        "adjusted_over": len(report.family),
        "regressions": [_named(row) for row in report.regressions],
        "threshold_failures": [_named(row) for row in report.threshold_failures],
        "rows": [_row_json(row) for row in report.rows],
        "notes": report.notes,
    }


def _row_json(row: GateRow) -> RowJson:
    judge = row.paired.judge
    return {
        "task": row.task,
        "metric": row.metric,
        "better": direction(row.paired.higher_is_better),
        "n": row.n,
        "baseline": row.baseline,
        "candidate": row.candidate,
        "delta": row.delta,
        "ci95": list(row.ci95) if row.ci95 else None,
        "worse_by": row.worse_by,
        "test": row.test,
        "p": row.p,
        "adjusted": row.adjusted and row.p is not None,
        "p_holm": row.p_holm,
        "verdict": _row_verdict(row),
        "threshold": row.threshold,
        "threshold_verdict": None if row.threshold_fails is None else "fail" if row.threshold_fails else "pass",
        "scored_worst": row.paired.scored_worst.ids,
        "left_out": row.paired.left_out.ids,
        "judge": None
        if judge is None
        else {
            "judges": judge.judges,
            "against_humans": judge.baseline_errors is not None and judge.candidate_errors is not None,
            "baseline_labelled": None if judge.baseline_errors is None else judge.baseline_errors.n,
            "candidate_labelled": None if judge.candidate_errors is None else judge.candidate_errors.n,
            "baseline_mean_error": None if judge.baseline_errors is None else judge.baseline_errors.mean,
            "candidate_mean_error": None if judge.candidate_errors is None else judge.candidate_errors.mean,
        },
    }


def workflow_commands(report: GateReport) -> list[str]:
    """GitHub Actions workflow commands: an error per regression, a notice per key a fixed threshold alone fails."""
    lines = [
        f"::error title=ragbench gate::{_escaped(f'{_named(row)} regressed: {worse_words(row)}, Holm p {_p(row.p_holm)}')}"
        for row in report.regressions
    ]
    lines += [
        "::notice title=ragbench gate::"
        + _escaped(
            f"{_named(row)}: a fixed threshold of {row.threshold:g} would fail ({worse_words(row)}), "
            f"not significant (Holm p {_p(row.p_holm)})"
        )
        for row in report.threshold_failures
        if not row.regression and row.threshold is not None
    ]
    return lines


def _escaped(message: str) -> str:
    """A workflow command's message as GitHub reads it: %, CR and LF escaped."""
    return message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def step_summary(report: GateReport) -> str:
    """The Markdown GitHub Actions shows on the run's page ($GITHUB_STEP_SUMMARY)."""
    head = f"### ragbench gate: {verdict(report).upper()}\n\n{verdict_line(report)}\n\n"
    where = f"baseline `{report.baseline}`, candidate `{report.candidate}`\n\n"
    listed = "".join(f"- {line}\n" for line in notes(report))
    return head + where + table(report) + "\n\n" + listed

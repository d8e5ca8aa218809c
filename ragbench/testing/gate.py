"""`ragbench gate` in a test: `gate_runs` gates a candidate run folder against its baseline and returns the report
(its rows, regressions and verdict line), `assert_no_regression` raises an AssertionError that names each significant
regression, with the gate's table. The pytest fixture `ragbench_gate` (ragbench.testing.fixtures) is the latter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from .._registry import installed_registry
from .._reports.gate.output import notes, table, verdict_line
from .._reports.gate.pairing import paired_runs
from .._reports.gate.verdicts import ALPHA, EVERY_KEY, ITERATIONS, GateReport, GateSettings, gate_report
from .._reports.results.finished_run import finished_run


def gate_runs(
    run: str | Path,
    baseline: str | Path,
    *,
    metrics: Sequence[str] | None = None,
    alpha: float = ALPHA,
    min_effect: Mapping[str, float] | float | None = None,
    thresholds: Mapping[str, float] | None = None,
    iterations: int = ITERATIONS,
    seed: int = 0,
) -> GateReport:
    """`ragbench gate RUN --baseline BASELINE` with these options, in this process: the report (`regressions`: the
    rows that fail it; `threshold_failures`: those the fixed `thresholds` fail). `min_effect`: one worsening for
    every key, or {key: worsening}. Raises `ConfigError` where the command would refuse (exit 2)."""
    settings = GateSettings(
        alpha=alpha,
        min_effect={EVERY_KEY: float(min_effect)} if isinstance(min_effect, (int, float)) else dict(min_effect or {}),
        thresholds=dict(thresholds or {}),
        iterations=iterations,
        seed=seed,
    )
    ours, theirs = finished_run(baseline, "gate"), finished_run(run, "gate")
    paired = paired_runs(
        ours,
        theirs,
        list(metrics) if metrics is not None else None,
        lambda name: installed_registry().metric_class(name),
    )
    return gate_report(ours.path, theirs.path, paired, settings)


def failure_message(report: GateReport) -> str:
    """What a failed gate says in a test: the verdict line, the table and its notes."""
    return "\n".join([verdict_line(report), "", table(report), *(f"- {line}" for line in notes(report))])


def assert_no_regression(
    run: str | Path,
    baseline: str | Path,
    *,
    metrics: Sequence[str] | None = None,
    alpha: float = ALPHA,
    min_effect: Mapping[str, float] | float | None = None,
    thresholds: Mapping[str, float] | None = None,
    iterations: int = ITERATIONS,
    seed: int = 0,
) -> GateReport:
    """`gate_runs` with these options, raising an AssertionError (`failure_message`) where the candidate regressed
    significantly; the report where it did not."""
    __tracebackhide__ = True  # pytest shows the failure at the test's call, not in here
    report = gate_runs(
        run,
        baseline,
        metrics=metrics,
        alpha=alpha,
        min_effect=min_effect,
        thresholds=thresholds,
        iterations=iterations,
        seed=seed,
    )
    if report.regressions:
        raise AssertionError(failure_message(report))
    return report

"""The verdict of `ragbench gate`: per paired key a one-sided test of "the candidate is worse"
(ragbench._statistics.sign_flip; the judge's error against human labels in it where it is measured,
ragbench._reports.gate.judge_error), Holm's adjustment over the keys tested (all tasks, one family), and a
regression where the adjusted p is under alpha and the estimated worsening is over the key's minimum effect.

A key on which no pair differs (and no judge error shifts) has p = 1 whatever happens, as the sign-flip test is
conditional on the sizes of the differences: it cannot fail, so it is left out of the family and costs the other
keys nothing (Tarone, 1990: the tests that cannot reject need no share of alpha). Failed examples that never occur,
keys that both runs score alike (a count of zero, a metric the change did not touch) are such keys.

A fixed threshold (`--threshold KEY=DELTA`: worse by more than DELTA fails) is judged on the same pairs and shown
beside it, and never sets the verdict: it is there to show what a threshold would have said (docs/gate.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..._statistics.bootstrap import mean
from ..._statistics.multiple_testing import holm
from ..._statistics.paired_tests import paired_bootstrap
from ..._statistics.sign_flip import exact, rectifier_draws, regression_p
from ..compare.comparison import ITERATIONS as COMPARE_ITERATIONS
from .pairing import PairedKey, PairedRuns

ALPHA = 0.05
ITERATIONS = 10_000  # sign flips: p down to 1e-4, Holm over 500 keys
EVERY_KEY = ""  # the key of a minimum effect given for every key


@dataclass(frozen=True)
class GateSettings:
    alpha: float = ALPHA
    min_effect: Mapping[str, float] = field(default_factory=dict)  # key (EVERY_KEY: each) -> smallest failing worsening
    thresholds: Mapping[str, float] = field(default_factory=dict)  # key -> a fixed threshold's allowed worsening
    iterations: int = ITERATIONS
    seed: int = 0

    def minimum(self, key: str) -> float:
        return self.min_effect.get(key, self.min_effect.get(EVERY_KEY, 0.0))


@dataclass
class GateRow:
    """One gated key of one task: its pairs' means, the difference and its interval, the test and its verdicts."""

    paired: PairedKey
    n: int
    baseline: float | None  # the mean over the pairs (None: no pair)
    candidate: float | None
    delta: float | None  # candidate - baseline
    ci95: tuple[float, float] | None  # the paired bootstrap's 95% interval of `delta` (compare's, 2,000 resamples)
    worse_by: float | None  # the estimated worsening in the key's direction (the judge's error corrected where counted)
    test: str
    p: float | None  # one-sided; None: not tested (no pair)
    adjusted: bool = True  # in Holm's family (False: no pair differs, p = 1 and no chance to fail)
    p_holm: float | None = None
    regression: bool = False
    threshold: float | None = None  # the fixed threshold given for the key
    threshold_fails: bool | None = None  # what that threshold says of the judged difference on the same pairs

    @property
    def task(self) -> str:
        return self.paired.task

    @property
    def metric(self) -> str:
        return self.paired.key


@dataclass
class GateReport:
    baseline: Path
    candidate: Path
    rows: list[GateRow]
    notes: list[str]
    settings: GateSettings

    @property
    def regressions(self) -> list[GateRow]:
        return [row for row in self.rows if row.regression]

    @property
    def threshold_failures(self) -> list[GateRow]:
        return [row for row in self.rows if row.threshold_fails]

    @property
    def tested(self) -> int:
        return sum(row.p is not None for row in self.rows)

    @property
    def family(self) -> list[GateRow]:
        """The rows Holm's adjustment is over: tested, and some pair differs."""
        return [row for row in self.rows if row.p is not None and row.adjusted]


def gate_report(baseline: Path, candidate: Path, paired: PairedRuns, settings: GateSettings) -> GateReport:
    """Every paired key tested, the p-values adjusted together by Holm's method, each row's verdicts."""
    report = GateReport(baseline, candidate, [tested_row(key, settings) for key in paired.keys], paired.notes, settings)
    family = report.family
    for row, adjusted in zip(family, holm([row.p for row in family if row.p is not None])):
        row.p_holm = adjusted
        row.regression = adjusted < settings.alpha and (row.worse_by or 0.0) > settings.minimum(row.metric)
    for row in report.rows:
        if (threshold := settings.thresholds.get(row.metric)) is not None and row.n:
            row.threshold = threshold
            row.threshold_fails = float(mean(row.paired.worse)) > threshold
    return report


def tested_row(paired: PairedKey, settings: GateSettings) -> GateRow:
    a, b, worse = paired.baseline, paired.candidate, paired.worse
    if not len(a):
        return GateRow(paired, 0, None, None, None, None, None, "not tested: no pair", None)
    interval = paired_bootstrap(a, b, COMPARE_ITERATIONS, settings.seed)[0] if len(a) >= 2 else None
    judge = paired.judge
    shift, spread, test = 0.0, None, "exact sign test (McNemar)" if exact(worse) else "sign-flip"
    if judge is not None and judge.baseline_errors is not None and judge.candidate_errors is not None:
        direction = 1.0 if paired.higher_is_better else -1.0
        ours, theirs = judge.baseline_errors, judge.candidate_errors
        shift = direction * (ours.mean - theirs.mean)
        spread = direction * (
            rectifier_draws(ours.values, ours.counts, settings.iterations, settings.seed + 1)
            - rectifier_draws(theirs.values, theirs.counts, settings.iterations, settings.seed + 2)
        )
        test = "sign-flip + judge's error vs humans"
    p = regression_p(worse, settings.iterations, settings.seed, spread, shift)
    differs = spread is not None or bool(np.any(worse != 0))
    return GateRow(paired, len(a), mean(a), mean(b), mean(b - a), interval, mean(worse) + shift, test, p, differs)


def worse_words(row: GateRow) -> str:
    """The row's worsening in words: "worse by 0.0312" or "better by 0.0100"."""
    value = row.worse_by or 0.0
    return f"worse by {value:.4f}" if value > 0 else f"better by {-value:.4f}" if value < 0 else "no change"

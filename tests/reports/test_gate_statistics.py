"""`ragbench gate`'s statistics: the one-sided sign-flip test (exact where every difference is of one size, its
random draws otherwise), Holm's adjustment across the keys gated, and the judge's error against human labels. The
promises: a candidate identical to its baseline passes, one uniformly worse by a large margin fails, noise (each
example's two values swapped at random, a judge's verdicts flipped at random) fails at most alpha of the time, and
the adjustment equals statsmodels' `multipletests(method="holm")` (0.14)."""

from __future__ import annotations

import gc
import itertools
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._reports.gate.judge_error import JudgeErrors, KeyJudge
from ragbench._reports.gate.pairing import PairedKey, PairedRuns, Reasons
from ragbench._reports.gate.verdicts import GateSettings, gate_report
from ragbench._statistics.sign_flip import at_least, regression_p, sign_flip_means

# The fixed seeds of the noise tests (deterministic): enough that a rate at most alpha in the long run is so on them
# (the exact test's rate on 0/1 values is about 3.3% over 4,000 seeds; its first 400 alone give 5.25%)
SEEDS = range(400)
EXACT_SEEDS = range(2000)


def multipletests(p_values: list[float]) -> list[float]:
    """statsmodels' Holm adjustment (without the full garbage collection its Holm branch ends with, which changes
    no number and is slow in a process holding torch's objects)."""
    from statsmodels.stats.multitest import multipletests as statsmodels_multipletests

    with mock.patch.object(gc, "collect", lambda *generation: 0):
        return list(statsmodels_multipletests(p_values, method="holm")[1])


def key(name: str, baseline, candidate, higher_is_better: bool = True, judge: KeyJudge | None = None) -> PairedKey:
    return PairedKey(
        "t",
        name,
        higher_is_better,
        np.asarray(baseline, float),
        np.asarray(candidate, float),
        Reasons(),
        Reasons(),
        judge,
    )


def gated(*keys: PairedKey, **options) -> list:
    report = gate_report(Path("base"), Path("cand"), PairedRuns(list(keys), []), GateSettings(**options))
    return report.rows


values = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=80)


@given(values, st.booleans(), st.integers(0, 2**32 - 1))
@settings(max_examples=60)
def test_a_candidate_identical_to_its_baseline_always_passes(baseline, higher_is_better, seed):
    rows = gated(key("m", baseline, baseline, higher_is_better), key("n", baseline, baseline), seed=seed)
    assert all(row.p == 1.0 and not row.adjusted and row.p_holm is None and not row.regression for row in rows)


@given(
    st.lists(st.floats(0.5, 1.0, allow_nan=False), min_size=12, max_size=80),
    st.floats(0.3, 0.5),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
@settings(max_examples=60)
def test_a_candidate_worse_by_a_large_margin_on_every_example_always_fails(baseline, margin, higher_is_better, seed):
    base = np.asarray(baseline)
    worse = base - margin if higher_is_better else base + margin
    binary = (base > 0.75).astype(float)  # a 0/1 key worse on every example: right in the baseline, wrong after
    rows = gated(
        key("m", base, worse, higher_is_better),
        key("em", np.ones(len(base)), np.zeros(len(base))),
        key("same", binary, binary),
        seed=seed,
    )
    assert [row.regression for row in rows] == [True, True, False]
    assert rows[1].p == 0.5 ** len(base)  # the exact one-sided McNemar test: every pair worse


@given(
    st.lists(
        st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from([0.0, 0.25, 1.0])), max_size=30),
        min_size=1,
        max_size=12,
    ),
    st.integers(0, 2**32 - 1),
)
@settings(max_examples=40)
def test_holm_across_the_keys_gated_equals_statsmodels(keys, seed):
    """Keys of any pairs (none: not tested, not in the family): the report's adjusted p-values are statsmodels'
    Holm adjustment of its tested rows' p-values."""
    rows = gated(
        *(key(f"k{i}", [a for a, _ in pairs], [b for _, b in pairs]) for i, pairs in enumerate(keys)),
        iterations=200,
        seed=seed,
    )
    family = [row for row in rows if row.p is not None and row.adjusted]
    assert all(row.p_holm is None for row in rows if row not in family)
    assert len(family) == sum(any(a != b for a, b in pairs) for pairs in keys)  # those whose pairs differ
    if family:
        assert [row.p_holm for row in family] == pytest.approx(multipletests([row.p for row in family]), abs=1e-12)


def test_keys_on_which_no_pair_differs_cost_the_others_nothing():
    """Eleven keys, ten of them alike in both runs (p 1: they cannot fail): the one that differs is adjusted alone,
    and fails as it would gated by itself."""
    base, cand = np.ones(8), np.r_[np.zeros(6), np.ones(2)]
    alike = [key(f"same{i}", base, base) for i in range(10)]
    rows = gated(key("em", base, cand), *alike)
    assert rows[0].p == 0.5**6 and rows[0].p_holm == 0.5**6 and rows[0].regression
    assert gated(key("em", base, cand))[0].p_holm == rows[0].p_holm
    assert all(row.p == 1.0 and row.p_holm is None and not row.adjusted for row in rows[1:])


@given(st.integers(1, 300), st.data())
@settings(max_examples=100)
def test_the_exact_binomial_tail_equals_scipys(n, data):
    from scipy.stats import binom

    k = data.draw(st.integers(0, n))
    assert at_least(n, k) == pytest.approx(float(binom.sf(k - 1, n, 0.5)), rel=1e-12, abs=1e-300)


@given(
    st.lists(st.sampled_from([-0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0, -1.0, 0.1]), min_size=1, max_size=10),
    st.integers(0, 1000),
)
@settings(max_examples=40)
def test_the_random_sign_flips_agree_with_every_sign_vector_enumerated(worse, seed):
    """The drawn p-value is within its sampling error of the exact one, every 2^n sign vector weighed alike."""
    w = np.asarray(worse)
    observed = w.mean()
    means = [np.dot(signs, w) / len(w) for signs in itertools.product((-1, 1), repeat=len(w))]
    exact = np.mean([m >= observed - 1e-12 for m in means])
    iterations = 20_000
    drawn = regression_p(w, iterations, seed)
    if len(np.unique(np.abs(w[w != 0]))) <= 1:
        assert drawn == pytest.approx(exact, abs=1e-12)  # the binomial path: exact
    else:
        assert abs(drawn - exact) <= 5 * np.sqrt(exact * (1 - exact) / iterations) + 2 / iterations


def test_the_drawn_means_have_the_sign_flip_distributions_moments():
    sizes, counts = np.array([0.25, 1.0]), np.array([30, 10])
    means = sign_flip_means(sizes, counts, 50, 200_000, 3)
    assert means.mean() == pytest.approx(0.0, abs=0.002)
    assert means.var() == pytest.approx(float(counts @ sizes**2) / 50**2, rel=0.02)


def noise_failure_rate(make_pair, seeds: range, iterations: int = 1000) -> float:
    """The share of `seeds` whose pair of runs (`make_pair(rng)`: keys) the gate fails."""
    failed = 0
    for seed in seeds:
        rows = gated(*make_pair(np.random.default_rng(seed)), iterations=iterations, seed=seed)
        failed += any(row.regression for row in rows)
    return failed / len(seeds)


def swapped(rng: np.random.Generator, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each example's two values given to the runs in a random order: noise of zero mean."""
    swap = rng.random(len(first)) < 0.5
    return np.where(swap, second, first), np.where(swap, first, second)


def test_noise_fails_the_gate_at_most_alpha_of_the_time():
    """Three keys of 60 examples (0/1, continuous, lower is better), each example's two draws swapped at random:
    over 400 seeds, the gate fails at most 5% of them (alpha 0.05, Holm over the three)."""

    def pair(rng):
        chance = rng.choice([0.9, 0.5, 0.1], size=60)
        em = swapped(rng, (rng.random(60) < chance).astype(float), (rng.random(60) < chance).astype(float))
        f1 = swapped(rng, rng.beta(2, 2, 60), rng.beta(2, 2, 60))
        cost = swapped(rng, rng.exponential(1.0, 60), rng.exponential(1.0, 60))
        return key("em", *em), key("f1", *f1), key("cost", *cost, higher_is_better=False)

    rate = noise_failure_rate(pair, SEEDS)
    assert rate <= 0.05, rate


def test_a_judges_noise_alone_fails_the_gate_at_most_alpha_of_the_time():
    """The same answers in both runs, right on 60% of 80 examples; a judge that flips its verdict on 20% of the
    examples, drawn apart in each run: over 2,000 seeds, the judged key fails the gate at most 5% of them."""

    def pair(rng):
        right = (rng.random(80) < 0.6).astype(float)
        judged = [np.where(rng.random(80) < 0.2, 1 - right, right) for _ in range(2)]
        return (key("llm_judge", *judged),)

    rate = noise_failure_rate(pair, EXACT_SEEDS)
    assert rate <= 0.05, rate


def errors(table: dict[float, int]) -> JudgeErrors:
    return JudgeErrors(np.array(list(table), float), np.array(list(table.values())))


def test_the_judges_error_against_humans_moves_and_widens_the_test():
    """Judged, the candidate is worse on 14 of 100 examples and better on none: alone, a significant regression.
    The humans' labels (50 per run) say the judge errs against the candidate's answers (it calls 14% of its right
    answers wrong, none of the baseline's): counted, the human-scale worsening is about zero and the gate passes."""
    baseline = np.ones(100)
    candidate = np.r_[np.zeros(14), np.ones(86)]
    alone = gated(key("llm_judge", baseline, candidate))[0]
    assert alone.regression and alone.p < 1e-4
    fair, unfair = errors({0.0: 50}), errors({0.0: 43, 1.0: 7})  # human - judge: 0, or 1 where the judge said wrong
    judge = KeyJudge("scripted:judge", fair, unfair)
    counted = gated(key("llm_judge", baseline, candidate, judge=judge))[0]
    assert counted.test == "sign-flip + judge's error vs humans"
    assert counted.worse_by == pytest.approx(0.14 - 0.14)
    assert not counted.regression and counted.p > 0.2


def test_a_judge_that_errs_alike_on_both_runs_only_widens_the_test():
    """The same worsening, the judge's errors alike in both runs (no bias to correct): the estimate is unchanged and
    the p-value larger than without them (their sampling error widens the null distribution)."""
    rng = np.random.default_rng(5)
    baseline = (rng.random(200) < 0.7).astype(float)
    candidate = np.where(rng.random(200) < 0.12, 0.0, baseline)
    alike = errors({0.0: 30, 1.0: 5, -1.0: 5})
    plain = gated(key("llm_judge", baseline, candidate))[0]
    counted = gated(key("llm_judge", baseline, candidate, judge=KeyJudge("j", alike, alike)))[0]
    assert counted.worse_by == pytest.approx(plain.worse_by)
    assert counted.p > plain.p

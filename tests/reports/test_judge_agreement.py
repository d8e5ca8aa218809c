"""Agreement statistics of judges (ragbench._statistics.rater_agreement): equal to the `krippendorff` package's
alpha and scikit-learn's `cohen_kappa_score` (expected values computed with them:
tests/data/judge_agreement_expected.json), and the properties every agreement has whatever the ratings."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._statistics.rater_agreement import (
    agreement,
    cohen_kappa,
    flipped_share,
    judged_interval,
    krippendorff_alpha,
    percent_agreement,
)
from support import paths

EXPECTED = json.loads((paths.DATA / "judge_agreement_expected.json").read_text())

verdicts = st.sampled_from([0.0, 1.0, -1.0, 0.5])
rating = st.one_of(st.none(), verdicts)


def tables(raters: int | None = None) -> st.SearchStrategy[list[list[float | None]]]:
    width = st.just(raters) if raters else st.integers(2, 5)
    return width.flatmap(lambda n: st.lists(st.lists(rating, min_size=n, max_size=n), min_size=1, max_size=30))


@pytest.mark.parametrize("case", EXPECTED["tables"], ids=lambda c: f"{len(c['table'])}x{len(c['table'][0])}")
def test_alpha_equals_the_krippendorff_package(case):
    for level in ("nominal", "interval"):
        assert krippendorff_alpha(case["table"], level) == pytest.approx(case[level], abs=1e-12)
    if "kappa" in case:
        first, second = zip(*case["table"], strict=True)
        assert cohen_kappa(first, second) == pytest.approx(case["kappa"], abs=1e-12)


@pytest.mark.parametrize("case", EXPECTED["pairs"], ids=lambda c: f"kappa {c['kappa']:.3f}")
def test_kappa_equals_scikit_learn(case):
    assert cohen_kappa(case["first"], case["second"]) == pytest.approx(case["kappa"], abs=1e-12)
    table = list(zip(case["first"], case["second"], strict=True))
    assert krippendorff_alpha(table, "nominal") == pytest.approx(case["nominal"], abs=1e-12)
    assert krippendorff_alpha(table, "interval") == pytest.approx(case["interval"], abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(verdicts, min_size=2, max_size=40), st.integers(2, 5))
def test_identical_raters_agree_fully(values, raters):
    table = [[v] * raters for v in values]
    assert percent_agreement(table) == 1
    assert flipped_share(table) == 0
    if len(set(values)) > 1:  # one value throughout: no chance agreement to measure against (None)
        assert krippendorff_alpha(table) == pytest.approx(1)
        assert krippendorff_alpha(table, "nominal") == pytest.approx(1)
        assert cohen_kappa(values, values) == pytest.approx(1)
    else:
        assert krippendorff_alpha(table) is None and cohen_kappa(values, values) is None


@settings(max_examples=60, deadline=None)
@given(tables())
def test_agreement_does_not_depend_on_the_raters_order(table):
    reversed_table = [list(reversed(unit)) for unit in table]
    for statistic in (percent_agreement, flipped_share, krippendorff_alpha):
        forward, backward = statistic(table), statistic(reversed_table)
        assert forward == backward or forward == pytest.approx(backward, abs=1e-12)
    first, second = zip(*[(u[0], u[-1]) for u in table], strict=True)
    kappa, swapped = cohen_kappa(first, second), cohen_kappa(second, first)
    assert kappa == swapped or kappa == pytest.approx(swapped, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(tables())
def test_agreement_in_range_and_flips_complement_agreement_of_two(table):
    share, flipped = percent_agreement(table), flipped_share(table)
    assert (share is None) == (flipped is None)
    if share is not None:
        assert 0 <= share <= 1 and 0 <= flipped <= 1
        if all(len(unit) == 2 for unit in table):
            assert flipped == pytest.approx(1 - share)
    alpha = krippendorff_alpha(table)
    assert alpha is None or alpha <= 1 + 1e-12


def test_units_with_fewer_than_two_ratings_are_left_out():
    table = [[1.0, None], [None, None], [0.0, 0.0], [1.0, 0.0]]
    assert agreement(table) == {
        "raters": 2,
        "examples": 2,
        "percent_agreement": 0.5,
        "cohen_kappa": 0.0,
        "krippendorff_alpha": pytest.approx(krippendorff_alpha([[0.0, 0.0], [1.0, 0.0]])),
        "flipped": 0.5,
    }
    assert agreement([[1.0, 0.0, 1.0]])["cohen_kappa"] is None  # three raters: alpha, no kappa


def test_judged_interval_widens_with_the_judges_disagreement():
    scores = [0.4 + 0.2 * (i % 2) for i in range(200)]  # the first judge's; the others about it or equal
    steady = [[x] * 3 for x in scores]
    noisy = [[x, x - 0.3, x + 0.3] for x in scores]
    low_s, high_s = judged_interval(steady, 2000, seed=1)
    low_n, high_n = judged_interval(noisy, 2000, seed=1)
    assert high_n - low_n > high_s - low_s
    assert judged_interval(steady, 2000, seed=1) == (low_s, high_s)  # seeded: the same every time
    assert judged_interval([[1.0, None]], 100, seed=1) is None


def test_judged_interval_drawn_by_counts_is_that_of_drawing_examples_and_raters():
    """The quick draw (how often each value is drawn) against the two-level draw done one example at a time."""
    rng = np.random.default_rng(7)
    table = [[float(v) for v in rng.choice([0.0, 0.5, 1.0], size=int(rng.integers(1, 4)))] for _ in range(150)]
    rounds = 4000
    values = np.array([row + [np.nan] * (3 - len(row)) for row in table])
    rated = np.array([len(row) for row in table])
    drawn = rng.integers(0, len(table), size=(rounds, len(table)))  # the examples of each round
    which = (rng.random(size=drawn.shape) * rated[drawn]).astype(int)  # a rater of each drawn example
    expected = np.percentile(values[drawn, which].mean(axis=1), [2.5, 97.5])
    assert judged_interval(table, rounds, seed=3) == pytest.approx(tuple(expected), abs=0.01)

"""Prediction-powered inference of a mean (ragbench._statistics.ppi): equal to ppi-python's and ARES's outputs
on the same inputs (tests/data/ppi, NOTES.md), and what must hold for a perfect judge and a judge of no use."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._statistics.ppi import classical_mean, ppi_mean
from support import paths

FIXTURE = json.loads((paths.DATA / "ppi" / "ppi_python_mean.json").read_text())
CASES = {case["name"]: case for case in FIXTURE["cases"]}
ALPHAS = (0.05, 0.1)


def interval(estimate):
    return [estimate.low, estimate.high]


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_the_tuned_estimate_and_interval_are_ppi_pythons(name, alpha):
    case = CASES[name]
    estimate = ppi_mean(case["labels"], case["judged"], case["unlabelled"], confidence=1 - alpha)
    assert estimate.value == pytest.approx(case["ppi_pointestimate"], abs=1e-12)
    assert interval(estimate) == pytest.approx(case[f"alpha_{alpha}"]["ppi_ci"], abs=1e-12)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_lambda_one_is_ppi_pythons_and_ares_interval(name, alpha):
    case = CASES[name]
    estimate = ppi_mean(case["labels"], case["judged"], case["unlabelled"], confidence=1 - alpha, power=1)
    assert estimate.value == pytest.approx(case["ppi_pointestimate_lhat1"], abs=1e-12)
    assert interval(estimate) == pytest.approx(case[f"alpha_{alpha}"]["ppi_ci_lhat1"], abs=1e-12)
    assert interval(estimate) == pytest.approx(case[f"alpha_{alpha}"]["ares_pp_mean_iid_asymptotic"], abs=1e-12)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_the_classical_interval_is_ppi_pythons(name, alpha):
    case = CASES[name]
    found = classical_mean(case["labels"], confidence=1 - alpha)
    assert interval(found) == pytest.approx(case[f"alpha_{alpha}"]["classical_ci"], abs=1e-12)


def test_a_good_judge_is_worth_more_labels_than_were_given():
    case = CASES["binary_judge_85pct"]
    estimate = ppi_mean(case["labels"], case["judged"], case["unlabelled"])
    humans = classical_mean(case["labels"])
    assert estimate.high - estimate.low < humans.high - humans.low
    assert estimate.effective_n == pytest.approx(40 * (humans.std_error / estimate.std_error) ** 2)
    assert estimate.effective_n > 40


def test_without_labelled_or_unlabelled_examples_there_is_no_estimate():
    with pytest.raises(ValueError, match="PPI needs"):
        ppi_mean([], [], [1.0])
    with pytest.raises(ValueError, match="PPI needs"):
        ppi_mean([1.0], [1.0], [])


values = st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]), min_size=2, max_size=40)


@settings(max_examples=200)
@given(labelled=values, unlabelled=values)
def test_a_perfect_judge_gives_the_classical_interval_of_every_judged_example(labelled, unlabelled):
    """A perfect judge gives each example its human label, so the rectifier is 0 and the lambda = 1 estimate
    (ARES's) is the classical interval of the N unlabelled examples' labels: what humans labelling all of them
    would have given."""
    estimate = ppi_mean(labelled, labelled, unlabelled, power=1)
    classical = classical_mean(unlabelled)
    assert estimate.value == pytest.approx(classical.value, abs=1e-12)
    assert interval(estimate) == pytest.approx(interval(classical), abs=1e-12)


@settings(max_examples=200)
@given(labelled=values, unlabelled=values, judged=values)
def test_a_judge_of_no_use_widens_the_lambda_one_interval_and_the_tuned_one_falls_back_to_the_humans(
    labelled, unlabelled, judged
):
    """A judge whose values on the labelled examples do not covary positively with the labels (sample
    covariance <= 0: noise, or worse): the tuned estimate sets lambda to 0 and is exactly the humans' classical
    interval; and where the judge's values vary within the labelled or the unlabelled examples, the lambda = 1
    interval (ARES's) is strictly wider than the humans' (its variance exceeds theirs by
    var(unlabelled)/N + (var(judged) - 2 cov)/n)."""
    judged = (judged * len(labelled))[: len(labelled)]
    mean_label, mean_judged = sum(labelled) / len(labelled), sum(judged) / len(judged)
    covariance = sum((y - mean_label) * (f - mean_judged) for y, f in zip(labelled, judged))
    if covariance > 1e-12:
        return
    humans = classical_mean(labelled)
    tuned = ppi_mean(labelled, judged, unlabelled)
    assert tuned.power == pytest.approx(0, abs=1e-9)
    assert interval(tuned) == pytest.approx(interval(humans), abs=1e-9)
    if len(set(judged)) > 1 or len(set(unlabelled)) > 1:
        untuned = ppi_mean(labelled, judged, unlabelled, power=1)
        assert untuned.high - untuned.low > humans.high - humans.low


@settings(max_examples=200)
@given(labelled=values, unlabelled=values, constant=st.sampled_from([0.0, 1.0]))
def test_a_judge_that_always_says_the_same_adds_nothing(labelled, unlabelled, constant):
    """A constant judge carries no information: lambda 0, the humans' interval, worth exactly n labels."""
    estimate = ppi_mean(labelled, [constant] * len(labelled), [constant] * len(unlabelled))
    humans = classical_mean(labelled)
    assert estimate.power == 0
    assert interval(estimate) == pytest.approx(interval(humans), abs=1e-12)
    assert estimate.effective_n is None or estimate.effective_n == pytest.approx(len(labelled))

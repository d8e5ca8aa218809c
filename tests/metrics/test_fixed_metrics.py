"""The separately named fixed variants: what they repair relative to upstream `match`."""

from __future__ import annotations

import pytest

from ragbench.api import Example, Prediction
from ragbench.metrics.choice import ChoiceAccuracy, LabelAccuracy
from ragbench.metrics.match import NormalizedMatch

ARC_GOLD = {
    "answers": ["C"],
    "answer_key": "C",
    "choices": {"label": ["A", "B", "C", "D"], "text": ["Iron", "Copper", "Chlorophyll", "Salt"]},
}


def score(metric, gold, answer):
    return metric.score(Example(id="x", question="q", gold=gold), Prediction(example_id="x", answer=answer))


@pytest.mark.parametrize(
    "answer,expected",
    [
        ("C", 1.0),
        ("C: Chlorophyll", 1.0),
        ("(C)", 1.0),
        ("c", 0.0),
        ("The answer is C", 1.0),
        ("Chlorophyll", 1.0),
        ("Chlorophyll in the leaf", 0.0),
        ("Answer: B", 0.0),
        ("B: Copper\n[Cite]: [3]", 0.0),
        ("C\n[Cite]: [1]", 1.0),
        ("", 0.0),
    ],
)
def test_choice_accuracy_reads_the_picked_option(answer, expected):
    assert score(ChoiceAccuracy(), ARC_GOLD, answer) == expected


def test_choice_accuracy_maps_numeric_keys_and_keeps_option_e():
    numeric = {"answers": ["2"], "answer_key": "2", "choices": {"label": ["1", "2", "3", "4"], "text": list("wxyz")}}
    assert score(ChoiceAccuracy(), numeric, "B") == 1.0
    five = {"answers": ["E"], "answer_key": "E", "choices": {"label": list("ABCDE"), "text": list("vwxyz")}}
    assert score(ChoiceAccuracy(), five, "E: z") == 1.0


@pytest.mark.parametrize(
    "answer,gold,expected",
    [
        ("True", "true", 1.0),
        ("FALSE.", "false", 1.0),
        ("The claim is false", "false", 1.0),
        ("SUPPORTS", "true", 1.0),
        ("refutes", "false", 1.0),
        ("The statement is not true, it is false.", "false", 0.0),
        ("no idea", "true", 0.0),
    ],
)
def test_label_accuracy_takes_the_first_verdict_in_any_case(answer, gold, expected):
    assert score(LabelAccuracy(), {"answers": [gold]}, answer) == expected


@pytest.mark.parametrize(
    "answer,golds,expected",
    [
        ("Politician", ["politician"], 1.0),
        ("the Denver Broncos!", ["Denver Broncos"], 1.0),
        ("He was a police officer.", ["pol"], 0.0),
        ("neurosurgeon", ["surgeon"], 0.0),
        ("anything", [""], 0.0),
    ],
)
def test_normalized_match_is_case_and_article_blind_and_needs_whole_words(answer, golds, expected):
    assert score(NormalizedMatch(), {"answers": golds}, answer) == expected

"""mirage_accuracy against values produced by running MIRAGE's src/evaluate.py (tests/data/parity/mirage.json
records the commit and how each value was obtained)."""

from __future__ import annotations

import json

import pytest

from conftest import TEST_DATA
from ragbench.api import Example, Prediction
from ragbench.tasks.mirage.metrics import NOT_FOUND, MirageAccuracy

PARITY = json.loads((TEST_DATA / "parity" / "mirage.json").read_text(encoding="utf-8"))
CASES = PARITY["cases"]


class Counts:
    """The run's counter, as the metric sees it through ctx."""

    def __init__(self) -> None:
        self.counted: list[str] = []

    def count(self, name: str) -> None:
        self.counted.append(name)


def example_of(case: dict) -> Example:
    """The example a MIRAGE YAML task makes of a benchmark.json record (options: labels in order)."""
    labels = sorted(case["options"])
    return Example(
        id=case["id"],
        question="q",
        gold={
            "answers": [case["answer"]],
            "answer_key": case["answer"],
            "choices": {"label": labels, "text": [case["options"][label] for label in labels]},
        },
    )


def score(case: dict, ctx=None, locate: str = "standard") -> float:
    return MirageAccuracy(locate).score(example_of(case), Prediction(example_id=case["id"], answer=case["output"]), ctx)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_accuracy_equals_evaluate_py(case):
    assert score(case) == case["accuracy"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_the_pmc_llama_reader_equals_evaluate_py_with_locate_answer4pub_llama(case):
    assert score(case, locate="pmc_llama") == case["accuracy_pmc_llama"]


@pytest.mark.parametrize("locate, sets", [("standard", "sets"), ("pmc_llama", "sets_pmc_llama")])
@pytest.mark.parametrize("name", sorted(PARITY["sets"]))
def test_the_mean_over_a_set_equals_evaluate_py_mean_acc(name, locate, sets):
    values = [score(case, locate=locate) for case in CASES if case["set"] == name]
    assert (len(values), sum(values) / len(values)) == (
        PARITY[sets][name]["n"],
        pytest.approx(PARITY[sets][name]["acc"], abs=1e-12),
    )


@pytest.mark.parametrize(
    "case_id, counted",
    [
        ("no_option_gold_a", True),
        ("empty_output", True),
        ("letter_e", True),
        ("spaced_quote", True),
        ("json_right", False),
        ("colon_no_json", False),
    ],
)
def test_an_output_where_no_option_is_found_is_scored_as_a_and_counted(case_id, counted):
    counts = Counts()
    case = next(c for c in CASES if c["id"] == case_id)
    score(case, counts)
    assert counts.counted == ([NOT_FOUND] if counted else [])

"""hotpot_supporting_facts against hotpot_evaluate_v1.py: the values of running it, once per record, on
ragbench's HotpotQA sample with the predictions of tests/data/parity/official_denominators.json."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import Example, Prediction
from ragbench.metrics.supporting_facts import HotpotSupportingFacts

HOTPOT = json.loads((TEST_DATA / "parity" / "official_denominators.json").read_text(encoding="utf-8"))["hotpotqa"]
RECORDS = {
    r["_id"]: r
    for r in json.loads((TEST_DATA / "open_qa" / "hotpot_dev_distractor_v1.json").read_text(encoding="utf-8"))
}
KEYS = HotpotSupportingFacts.declares.keys


class Counts:
    def __init__(self) -> None:
        self.counted: list[str] = []

    def count(self, name: str) -> None:
        self.counted.append(name)


def example(key: str) -> Example:
    record = RECORDS[key]
    return Example(
        id=key,
        question=record["question"],
        gold={"answers": [record["answer"]], "supporting_passages": record["supporting_facts"]},
    )


def predict(key: str, answer: str, facts: list | None) -> Prediction:
    return Prediction(example_id=key, answer=answer, extras={} if facts is None else {"supporting_facts": facts})


@pytest.mark.parametrize("key", sorted(HOTPOT["answers"]))
def test_sp_and_joint_scores_equal_hotpot_evaluate_v1(key):
    ctx = Counts()
    values = HotpotSupportingFacts().score(
        example(key), predict(key, HOTPOT["answers"][key], HOTPOT["sp"].get(key)), ctx
    )
    assert values == pytest.approx({k: HOTPOT["per_example"][key][k] for k in KEYS}, abs=1e-12)
    assert ctx.counted == ([] if key in HOTPOT["sp"] else ["hotpot_sp_missing"])  # scored 0 as a missing "sp"


def test_joint_f1_of_a_half_right_answer_and_half_right_facts_equals_hotpot_evaluate_v1():
    case = HOTPOT["with_sp"]
    values = HotpotSupportingFacts().score(
        example("5c8a03"),
        predict("5c8a03", case["predictions"]["answer"]["5c8a03"], case["predictions"]["sp"]["5c8a03"]),
    )
    assert values == pytest.approx({k: case["metrics"][k] for k in KEYS}, abs=1e-12)
    assert values["joint_f1"] == pytest.approx(0.4)


def test_facts_in_another_shape_fail_the_metric_rather_than_score():
    with pytest.raises(ValueError, match="list of \\[title, sentence index\\] pairs"):
        HotpotSupportingFacts().score(example("5c8a01"), predict("5c8a01", "Trask", [["Olm", "1"]]))


def test_the_gold_in_huggingface_column_form_reads_the_same():
    record = RECORDS["5c8a01"]
    titles, ids = zip(*record["supporting_facts"])
    columns = Example(
        id="5c8a01", question="q", gold={"answers": ["Trask"], "supporting_passages": {"title": titles, "sent_id": ids}}
    )
    prediction = predict("5c8a01", "Trask", HOTPOT["sp"]["5c8a01"])
    assert HotpotSupportingFacts().score(columns, prediction) == HotpotSupportingFacts().score(
        example("5c8a01"), prediction
    )


FACTS = st.lists(st.tuples(st.sampled_from(["Olm", "Varn", "Ansgar Pell", "Trask"]), st.integers(0, 3)), max_size=6)


@settings(max_examples=50)
@given(predicted=FACTS, gold=FACTS.filter(bool))
def test_sp_scores_are_update_sps_set_arithmetic(predicted, gold):
    """update_sp on sets: tp, fp, fn counted over the distinct facts (a repeated prediction counts once)."""
    values = HotpotSupportingFacts().score(
        Example(id="x", question="q", gold={"answers": ["Olm"], "supporting_passages": [list(f) for f in gold]}),
        Prediction(example_id="x", answer="Olm", extras={"supporting_facts": [list(f) for f in predicted]}),
    )
    tp, fp, fn = len(set(predicted) & set(gold)), len(set(predicted) - set(gold)), len(set(gold) - set(predicted))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn)
    assert values["sp_prec"] == pytest.approx(precision) and values["sp_recall"] == pytest.approx(recall)
    assert values["sp_em"] == float(fp + fn == 0) == values["joint_em"]  # the answer is right
    assert values["joint_prec"] == pytest.approx(precision) and values["joint_recall"] == pytest.approx(recall)

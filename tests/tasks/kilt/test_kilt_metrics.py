"""kilt_downstream and kilt_retrieval against values produced by running KILT's eval_downstream.py and
eval_retrieval.py (tests/data/parity/kilt.json records the commit and how each value was obtained)."""

from __future__ import annotations

import json

import pytest

from conftest import TEST_DATA
from ragbench.api import ConfigError, Document, Example, Prediction
from ragbench.tasks.kilt.metrics import KiltDownstream, KiltRetrieval
from support.helpers import run

PARITY = json.loads((TEST_DATA / "parity" / "kilt.json").read_text(encoding="utf-8"))["cases"]


def example_of(outputs: list[dict]) -> Example:
    """The example a KILT YAML task makes of a record with these outputs (output.answer, output.provenance
    from each output that has it)."""
    provenance = [o["provenance"] for o in outputs if "provenance" in o]
    gold = {
        "answers": [o["answer"] for o in outputs if "answer" in o],
        **({"provenance": provenance} if provenance or not outputs else {}),
    }
    return Example(id="x", question="q", gold=gold)


def shown(pages: list[str]) -> list[Document]:
    return [
        Document(id=f"{page}#{n}", title="t", text="...", metadata={"wikipedia_id": page})
        for n, page in enumerate(pages)
    ]


def predict(case: dict) -> Prediction:
    return Prediction(example_id="x", answer=case["answer"], docs=shown(case["shown_pages"]))


@pytest.mark.parametrize("case", PARITY, ids=lambda c: c["id"])
def test_downstream_equals_eval_downstream(case):
    upstream = case["eval_downstream"]["downstream"]
    assert KiltDownstream().score(example_of(case["outputs"]), predict(case)) == pytest.approx(upstream, abs=1e-12)


@pytest.mark.parametrize("case", PARITY, ids=lambda c: c["id"])
def test_retrieval_and_kilt_scores_equal_eval_downstream(case):
    values = KiltRetrieval().score(example_of(case["outputs"]), predict(case))
    upstream = case["eval_downstream"]
    expected = {
        "rprec": upstream["retrieval"]["Rprec"],
        "recall_at_5": upstream["retrieval"]["recall@5"],
        **{f"kilt_{key[5:]}": value for key, value in upstream["kilt"].items()},
    }
    assert values == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("k", [2, 5, 10])
@pytest.mark.parametrize("case", PARITY, ids=lambda c: c["id"])
def test_rprec_and_recall_at_k_equal_eval_retrieval(case, k):
    values = KiltRetrieval(k=k).score(example_of(case["outputs"]), predict(case))
    upstream = case["eval_retrieval"]
    assert (values["rprec"], values[f"recall_at_{k}"]) == pytest.approx((upstream["Rprec"], upstream[f"recall@{k}"]))


def test_without_gold_answers_the_answer_scores_are_not_scorable():
    example = Example(id="x", question="q", gold={"answers": ["", "  "], "provenance": [[{"wikipedia_id": "1"}]]})
    prediction = Prediction(example_id="x", answer="a", docs=shown(["1"]))
    assert set(KiltDownstream().score(example, prediction).values()) == {None}
    values = KiltRetrieval().score(example, prediction)
    assert values["rprec"] == 1.0 and values["kilt_em"] is None


def test_a_record_without_outputs_is_not_scorable_where_upstream_raises_and_one_without_provenance_scores_0():
    prediction = Prediction(example_id="x", answer="Pell", docs=shown(["1"]))
    assert set(KiltRetrieval().score(example_of([]), prediction).values()) == {None}  # eval_retrieval: max() of none
    values = KiltRetrieval().score(example_of([{"answer": "Pell"}]), prediction)  # eval_retrieval: Rprec 0, recall 0
    assert (values["rprec"], values["recall_at_5"], values["kilt_em"]) == (0.0, 0.0, 0.0)


def test_a_shown_document_without_a_wikipedia_id_fails_instead_of_scoring_0():
    prediction = Prediction(example_id="x", answer="a", docs=[Document(id="7", title="t", text="...")])
    with pytest.raises(ValueError, match="document '7' has no wikipedia_id"):
        KiltRetrieval().score(example_of([{"answer": "a", "provenance": [{"wikipedia_id": "7"}]}]), prediction)


def test_outputs_whose_shown_documents_are_unknown_fail_instead_of_scoring_0():
    prediction = Prediction(example_id="x", answer="a", extras={"docs_unknown": True})
    with pytest.raises(ValueError, match='has no "docs"'):
        KiltRetrieval().score(example_of([{"answer": "a", "provenance": [{"wikipedia_id": "7"}]}]), prediction)


@pytest.mark.parametrize("k", [0, "five"])
def test_k_must_be_a_positive_integer(tmp_path, k):
    with pytest.raises(ConfigError, match="kilt_retrieval"):
        run(
            tmp_path,
            tasks=["kilt_nq"],
            data={"kilt_nq": str(TEST_DATA / "kilt" / "nq-dev-kilt.jsonl")},
            system="closed_book",
            model="scripted:echo",
            metric_args={"kilt_retrieval.k": k},
        )


RAW = json.loads((TEST_DATA / "parity" / "official_denominators.json").read_text(encoding="utf-8"))["kilt_raw_outputs"]


def test_the_whole_output_is_scored_by_default_and_a_named_extract_scores_a_part():
    """eval_downstream.py on "SUPPORTS." against SUPPORTS: accuracy 0, ROUGE-L 0.999999995 (the fever case of
    tests/data/parity/official_denominators.json); `extract=fever_label` reads the verdict out of it, and
    `extract=first_line` scores the first line."""
    fever = Example(id="x", question="q", gold={"answers": ["SUPPORTS"], "provenance": [[{"wikipedia_id": "1"}]]})
    said = Prediction(example_id="x", answer="SUPPORTS.", docs=shown(["1"]))
    assert KiltDownstream().score(fever, said) == pytest.approx(
        {"accuracy": 0.0, "em": 1.0, "f1": 1.0, "rougel": 0.999999995}, abs=1e-12
    )
    assert RAW["fever"]["answers"][0] == "SUPPORTS." and RAW["fever"]["downstream"]["rougel"] == 0.999999995
    assert KiltDownstream(extract="fever_label").score(fever, said)["accuracy"] == 1.0
    assert KiltRetrieval(extract="fever_label").score(fever, said)["kilt_accuracy"] == 1.0
    assert KiltRetrieval().score(fever, said)["kilt_accuracy"] == 0.0
    two_lines = Prediction(example_id="x", answer="Varn\nIt is an island.")
    trex = Example(id="x", question="q", gold={"answers": ["Varn"]})
    assert KiltDownstream().score(trex, two_lines)["f1"] == pytest.approx(RAW["trex"]["downstream"]["f1"])
    assert KiltDownstream(extract="first_line").score(trex, two_lines)["accuracy"] == 1.0

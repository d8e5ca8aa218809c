"""multihop_rag_qa and multihop_rag_retrieval against values produced by running MultiHop-RAG's qa_evaluate.py
and retrieval_evaluate.py (tests/data/parity/multihop_rag.json records the commit and how each value was
obtained), per example and averaged as upstream averages: per question type, null queries left out of
retrieval."""

from __future__ import annotations

import json
from statistics import mean

import pytest

from conftest import TEST_DATA
from ragbench.api import Document, Example, Prediction
from ragbench.tasks.multihop_rag.metrics import MultiHopRagQA, MultiHopRagRetrieval

PARITY = json.loads((TEST_DATA / "parity" / "multihop_rag.json").read_text(encoding="utf-8"))
QA, RETRIEVAL = PARITY["qa"], PARITY["retrieval"]
UPSTREAM_KEYS = {"hits_at_4": "Hits@4", "hits_at_10": "Hits@10", "map_at_10": "MAP@10", "mrr_at_10": "MRR@10"}


def accuracy(case: dict) -> float | None:
    example = Example(
        id="x", question="q", gold={"answers": [case["gold"]]}, meta={"question_type": case["question_type"]}
    )
    return MultiHopRagQA().score(example, Prediction(example_id="x", answer=case["model_answer"]))["accuracy"]


@pytest.mark.parametrize("case", QA["cases"], ids=lambda c: c["model_answer"] or "empty")
def test_accuracy_is_qa_evaluates_word_overlap(case):
    assert accuracy(case) == case["precision"]


def test_the_mean_per_question_type_and_overall_is_qa_evaluates_precision_recall_and_f1():
    for question_type, upstream in QA["by_question_type"].items():
        ours = mean(accuracy(case) for case in QA["cases"] if case["question_type"] == question_type)
        assert ours == pytest.approx(upstream["precision"], abs=1e-12)
        assert upstream["precision"] == upstream["recall"] == upstream["f1"]
    assert mean(accuracy(case) for case in QA["cases"]) == pytest.approx(QA["overall"]["precision"], abs=1e-12)


def test_an_empty_gold_answer_is_not_scorable_as_upstream_leaves_it_out():
    assert accuracy({"gold": "", "model_answer": "anything", "question_type": "inference_query"}) is None


def shown(case: dict) -> list[Document]:
    return [
        Document(
            id=str(n),
            title=node["title"],
            text=node["text"],
            metadata={"published_at": node["published_at"], "source": node["source"]},
        )
        for n, node in enumerate(case["shown"])
    ]


def retrieval(case: dict) -> dict:
    example = Example(
        id="x",
        question="q",
        gold={"evidence": [{"title": "t", "fact": fact} for fact in case["facts"]]},
        meta={"question_type": case["question_type"]},
    )
    return MultiHopRagRetrieval().score(example, Prediction(example_id="x", answer="a", docs=shown(case)))


@pytest.mark.parametrize("case", RETRIEVAL["cases"], ids=lambda c: c["id"])
def test_retrieval_equals_retrieval_evaluate_per_query(case):
    upstream = case["calculate_metrics"]
    if upstream is None:  # a null query: upstream leaves it out
        assert set(retrieval(case).values()) == {None}
    else:
        assert retrieval(case) == pytest.approx({key: upstream[name] for key, name in UPSTREAM_KEYS.items()}, abs=1e-12)


def test_the_mean_over_the_non_null_queries_is_retrieval_evaluates():
    values = [retrieval(case) for case in RETRIEVAL["cases"] if case["question_type"] != "null_query"]
    for key, name in UPSTREAM_KEYS.items():
        assert mean(v[key] for v in values) == pytest.approx(RETRIEVAL["all_cases"][name], abs=1e-12)
        assert f"{name}: {RETRIEVAL['all_cases'][name]:.4f}" in RETRIEVAL["printed"]


def test_a_null_query_is_not_scored_even_with_evidence_as_upstream_skips_its_type():
    case = {**RETRIEVAL["cases"][0], "question_type": "null_query"}
    assert set(retrieval(case).values()) == {None}


def test_a_query_without_evidence_is_not_scorable_where_upstream_divides_by_zero():
    case = {"facts": [], "question_type": "inference_query", "shown": RETRIEVAL["cases"][0]["shown"]}
    assert set(retrieval(case).values()) == {None}


def test_outputs_whose_shown_documents_are_unknown_fail_instead_of_scoring_0():
    example = Example(
        id="x", question="q", gold={"evidence": [{"fact": "A fact."}]}, meta={"question_type": "inference_query"}
    )
    with pytest.raises(ValueError, match='has no "docs"'):
        MultiHopRagRetrieval().score(example, Prediction(example_id="x", answer="a", extras={"docs_unknown": True}))


@pytest.mark.parametrize(
    "evidence",
    [[{"fact": "A fact."}, {"title": "t"}], "A fact.", [{"fact": 5}]],
    ids=["item_without_fact", "text_not_list", "fact_not_text"],
)
def test_an_evidence_list_without_facts_as_text_fails_naming_it_instead_of_counting_fewer_facts(evidence):
    example = Example(id="x", question="q", gold={"evidence": evidence}, meta={"question_type": "inference_query"})
    with pytest.raises(ValueError, match='evidence_list: expected a list of {"fact": text, ...} objects'):
        MultiHopRagRetrieval().score(example, Prediction(example_id="x", answer="a", docs=[]))


def test_a_gold_answer_that_is_a_list_fails_instead_of_scoring_its_first_item():
    example = Example(
        id="x", question="q", gold={"answers": ["Ansgar", "Pell"]}, meta={"question_type": "inference_query"}
    )
    with pytest.raises(ValueError, match="answer is a list of 2"):
        MultiHopRagQA().score(example, Prediction(example_id="x", answer="Ansgar"))

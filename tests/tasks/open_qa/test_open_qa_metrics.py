"""cover_em, hotpot_f1, supporting_passages (and the em/f1 they sit beside) against values produced by
running FlashRAG's, HotpotQA's, 2WikiMultihopQA's and MuSiQue's evaluation code
(tests/data/parity/open_qa_metrics.json records the commits and how each value was obtained)."""

from __future__ import annotations

import json

import pytest

from conftest import TEST_DATA
from ragbench.api import ConfigError, Document, Example, Prediction
from ragbench.metrics.match import ExactMatch, TokenF1
from ragbench.metrics.open_qa import CoverExactMatch, HotpotF1, SupportingPassages

PARITY = json.loads((TEST_DATA / "parity" / "open_qa_metrics.json").read_text(encoding="utf-8"))
ANSWERS, SUPPORT, MUSIQUE = PARITY["answer_cases"], PARITY["support_cases"], PARITY["musique_cases"]


def score(metric, gold: dict, answer: str = "", docs: list[Document] = ()):
    return metric.score(
        Example(id="x", question="q", gold=gold), Prediction(example_id="x", answer=answer, docs=list(docs))
    )


@pytest.mark.parametrize("case", ANSWERS, ids=lambda c: c["id"])
def test_cover_em_equals_flashrag_acc(case):
    assert score(CoverExactMatch(), {"answers": case["golds"]}, case["prediction"]) == case["flashrag_acc"]


@pytest.mark.parametrize("case", ANSWERS, ids=lambda c: c["id"])
def test_hotpot_f1_equals_hotpotqa_2wiki_and_flashrag_f1(case):
    value = score(HotpotF1(), {"answers": case["golds"]}, case["prediction"])
    assert value == pytest.approx(case["hotpot_f1_max"]) == pytest.approx(case["twowiki_f1"])
    assert value == pytest.approx(case["flashrag_f1"])


@pytest.mark.parametrize("case", ANSWERS, ids=lambda c: c["id"])
def test_em_and_f1_equal_every_upstream_em_and_musiques_f1(case):
    gold = {"answers": case["golds"]}
    em = score(ExactMatch(), gold, case["prediction"])
    assert em == case["flashrag_em"] == case["hotpot_em_max"] == case["twowiki_em"] == case["musique_em"]
    assert score(TokenF1(empty_agree=True), gold, case["prediction"]) == pytest.approx(case["musique_f1"])


def test_f1_scores_an_empty_answer_against_an_empty_gold_0_unless_empty_agree():
    """SQuAD v1.1's F1 (Self-RAG, HotpotQA) gives "" against "the" 0; MuSiQue's (SQuAD v2.0's) gives 1,
    so the musique task asks for empty_agree."""
    case = next(c for c in ANSWERS if c["id"] == "empty_answer_article_gold")
    gold = {"answers": case["golds"]}
    assert score(TokenF1(), gold, case["prediction"]) == case["hotpot_f1_max"] == 0
    assert score(TokenF1(empty_agree=True), gold, case["prediction"]) == case["musique_f1"] == 1
    assert score(TokenF1(empty_agree=True), gold, "Paris") == 0.0  # only both empty agree
    assert TokenF1().config() == {"name": "f1", "normalize": "squad"}
    assert TokenF1(empty_agree=True).config() == {"name": "f1", "normalize": "squad", "empty_agree": True}


def test_the_yes_no_rule_is_what_separates_hotpot_f1_from_f1():
    gold = {"answers": ["yes"]}
    assert score(TokenF1(), gold, "yes it is") == pytest.approx(0.5)
    assert score(HotpotF1(), gold, "yes it is") == 0.0


def test_answer_metrics_without_gold_answers_are_not_scorable():
    for metric in (CoverExactMatch(), HotpotF1()):
        assert score(metric, {"answers": []}, "Paris") is None


def titled(titles) -> list[Document]:
    return [Document(id=None, title=title, text="...") for title in titles]


@pytest.mark.parametrize("case", SUPPORT, ids=lambda c: c["id"])
def test_supporting_passages_equal_hotpotqa_and_2wiki_update_sp_at_passage_level(case):
    values = score(
        SupportingPassages(), {"supporting_passages": case["supporting_facts"]}, docs=titled(case["shown_titles"])
    )
    for upstream in (case["hotpot_update_sp"], case["twowiki_update_sp"]):
        assert values == pytest.approx(
            {
                "support_recall": upstream["sp_recall"],
                "support_precision": upstream["sp_prec"],
                "support_f1": upstream["sp_f1"],
                "support_em": upstream["sp_em"],
            }
        )


@pytest.mark.parametrize("case", MUSIQUE, ids=lambda c: c["id"])
def test_supporting_passages_by_id_equal_musiques_support_metric(case):
    docs = [Document(id=str(idx), title="same title", text="...") for idx in case["shown_ids"]]
    values = score(SupportingPassages(by="id"), {"supporting_passages": case["paragraphs"]}, docs=docs)
    upstream = case["musique_support"]
    assert values == pytest.approx(
        {
            "support_recall": upstream["recall"],
            "support_precision": upstream["precision"],
            "support_f1": upstream["f1"],
            "support_em": upstream["em"],
        }
    )


@pytest.mark.parametrize(
    "shape",
    [
        [["Olm", 0], ["Trask", 2], ["Olm", 1]],  # HotpotQA / 2Wiki release
        {"title": ["Olm", "Trask", "Olm"], "sent_id": [0, 2, 1]},  # Hugging Face / FlashRAG columns
        [
            {"idx": 4, "title": "Olm", "paragraph_text": "...", "is_supporting": True},
            {"idx": 5, "title": "Varn", "paragraph_text": "...", "is_supporting": False},
            {"idx": 6, "title": "Trask", "paragraph_text": "...", "is_supporting": True},
        ],  # MuSiQue paragraphs
        [
            {
                "id": 1,
                "question": "q1",
                "answer": "a",
                "paragraph_support_idx": 4,
                "support_paragraph": {"idx": 4, "title": "Olm", "paragraph_text": "...", "is_supporting": True},
            },
            {
                "id": 2,
                "question": "q2",
                "answer": "b",
                "paragraph_support_idx": 6,
                "support_paragraph": {"idx": 6, "title": "Trask", "paragraph_text": "...", "is_supporting": True},
            },
        ],  # FlashRAG MuSiQue
        ["Olm", "Trask"],  # a list of titles
    ],
    ids=["pairs", "columns", "musique_paragraphs", "question_decomposition", "titles"],
)
def test_supporting_passages_are_read_from_every_shape_the_sets_ship(shape):
    values = score(SupportingPassages(), {"supporting_passages": shape}, docs=titled(["Olm", "Varn", "Kiribati"]))
    assert values == pytest.approx(
        {"support_recall": 0.5, "support_precision": 1 / 3, "support_f1": 0.4, "support_em": 0.0}
    )


def test_a_record_without_supporting_passages_is_not_scorable():
    assert score(SupportingPassages(), {"supporting_passages": []}, docs=titled(["A"])) == dict.fromkeys(
        SupportingPassages.declares.keys
    )


def test_documents_without_ids_count_as_not_shown_by_id():
    values = score(
        SupportingPassages(by="id"), {"supporting_passages": [{"idx": 1, "is_supporting": True}]}, docs=titled(["A"])
    )
    assert values["support_precision"] == 0.0 and values["support_recall"] == 0.0


def test_an_unknown_by_is_a_config_error():
    with pytest.raises(ConfigError, match="by 'name' is not title or id"):
        SupportingPassages(by="name")


def test_outputs_whose_shown_documents_are_unknown_fail_instead_of_scoring_0():
    example = Example(id="x", question="q", gold={"supporting_passages": [["A", 0]]})
    with pytest.raises(ValueError, match='has no "docs"'):
        SupportingPassages().score(example, Prediction(example_id="x", answer="a", extras={"docs_unknown": True}))

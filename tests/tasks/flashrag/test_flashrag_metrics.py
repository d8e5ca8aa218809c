"""FlashRAG's em, acc, f1, precision, recall and rouge-1/2/l as ragbench computes them (em, cover_em,
hotpot_f1, token_pr, flashrag_rouge; regex=true on CuratedTREC) against values from running FlashRAG's
flashrag/evaluator/metrics.py (tests/data/parity/flashrag.json records the commit and how each value was
obtained). Each case goes through the FlashRAG reader, so a multiple-choice item's gold is its right
choices' texts, as FlashRAG's `get_dataset_answer` makes it."""

from __future__ import annotations

import json
import time

import pytest

from conftest import TEST_DATA
from ragbench.api import ConfigError, Document, Example, Prediction
from ragbench.api.retrieval import read_corpus
from ragbench.metrics.flashrag import FlashRagRetrieval, FlashRagRouge, TokenPrecisionRecall
from ragbench.metrics.match import ExactMatch
from ragbench.metrics.open_qa import CoverExactMatch, HotpotF1
from ragbench.tasks.open_qa.formats import flashrag_records

UPSTREAM = json.loads((TEST_DATA / "parity" / "flashrag.json").read_text(encoding="utf-8"))
PARITY, RETRIEVAL_PARITY, ZH_PARITY = UPSTREAM["cases"], UPSTREAM["retrieval_cases"], UPSTREAM["zh_rouge_cases"]
WORDLESS_GOLD = UPSTREAM["wordless_gold_rouge_cases"]
ROUGE = {"rouge_1": "rouge-1", "rouge_2": "rouge-2", "rouge_l": "rouge-l"}


def example_of(case: dict, tmp_path) -> Example:
    """The example of the case's record in FlashRAG's JSONL, as the flashrag format reads it."""
    record = {"id": case["id"], "question": "q", "golden_answers": case["golden_answers"], "metadata": {}}
    if case["choices"]:
        record["choices"] = case["choices"]
    path = tmp_path / "case.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    [(_, read)] = list(flashrag_records(path))
    return Example(id=case["id"], question="q", gold={"answers": read["golden_answers"]})


def upstream_value(value):
    """An upstream score; where upstream raised (the rouge package on an output without words) ragbench scores 0."""
    return 0.0 if isinstance(value, dict) else value


@pytest.mark.parametrize("case", PARITY, ids=lambda c: c["id"])
def test_metrics_equal_flashrag_evaluator(case, tmp_path):
    example = example_of(case, tmp_path)
    prediction = Prediction(example_id=case["id"], answer=case["pred"])
    regex = case["dataset_name"] == "curatedtrec"
    expected = {key: upstream_value(value) for key, value in case["expected"].items()}
    got = {
        "em": ExactMatch(regex=regex).score(example, prediction),
        "acc": CoverExactMatch(regex=regex).score(example, prediction),
        "f1": HotpotF1().score(example, prediction),
        **TokenPrecisionRecall().score(example, prediction),
        **{ROUGE[key]: value for key, value in FlashRagRouge().score(example, prediction).items()},
    }
    assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("case", ZH_PARITY, ids=lambda c: c["id"])
def test_zh_rouge_equals_flashrag_evaluator(case):
    example = Example(id=case["id"], question="q", gold={"answers": case["golden_answers"]})
    values = FlashRagRouge(language="zh").score(example, Prediction(example_id=case["id"], answer=case["pred"]))
    assert {ROUGE[key]: value for key, value in values.items()} == pytest.approx(
        {key: upstream_value(value) for key, value in case["expected"].items()}, abs=1e-12
    )


def test_rouge_language_is_en_or_zh():
    assert FlashRagRouge(language="zh").config() == {"name": "flashrag_rouge", "language": "zh"}
    with pytest.raises(ConfigError, match="language 'fr' is not en or zh"):
        FlashRagRouge(language="fr")


@pytest.mark.parametrize("case", RETRIEVAL_PARITY, ids=lambda c: c["id"])
def test_retrieval_recall_and_precision_equal_flashrag_evaluator(case, tmp_path):
    """The shown documents are the case's FlashRAG corpus passages as ragbench reads them (title split off)."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": str(i), "contents": c}) + "\n" for i, c in enumerate(case["contents"])))
    docs = list(read_corpus(corpus))
    assert all(isinstance(doc, Document) for doc in docs), docs
    prediction = Prediction(example_id=case["id"], answer="", docs=docs)
    values = FlashRagRetrieval(k=case["k"]).score(example_of(case, tmp_path), prediction)
    assert values == pytest.approx(case["expected"], abs=1e-12)


def test_retrieval_with_nothing_shown_is_recall_0_and_no_precision_where_upstream_divides_by_zero():
    """Upstream on retrieval_result []: Retrieval_Recall 0, Retrieval_Precision ZeroDivisionError (the
    precision of no document is no number; it was a silent 0)."""
    example = Example(id="x", question="q", gold={"answers": ["Evermouth"]})
    assert FlashRagRetrieval().score(example, Prediction(example_id="x", answer="a")) == {
        "retrieval_recall": 0.0,
        "retrieval_precision": None,
    }


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "5"])
def test_retrieval_k_must_be_a_whole_number_from_1(k):
    with pytest.raises(ConfigError, match="k must be a whole number"):
        FlashRagRetrieval(k=k)


def test_an_output_without_words_scores_rouge_0_where_upstream_stops():
    raised = [case["id"] for case in PARITY if isinstance(case["expected"]["rouge-l"], dict)]
    assert raised == ["empty_pred", "punct_only_pred"]


@pytest.mark.parametrize("case", WORDLESS_GOLD, ids=lambda c: c["id"])
def test_a_gold_without_words_is_left_out_of_rouge_where_upstream_stops(case):
    """Where upstream gives a number, the same; where a gold stops it ("Reference is empty."), the value over
    the other golds as upstream scores them alone, and with none left not scorable (it was a silent 0)."""
    example = Example(id=case["id"], question="q", gold={"answers": case["golden_answers"]})
    prediction = Prediction(example_id=case["id"], answer=case["pred"])
    values = FlashRagRouge(language=case["language"]).score(example, prediction)
    got = {ROUGE[key]: value for key, value in values.items()}
    if "expected_over_golds_with_words" not in case:
        assert got == pytest.approx({key: upstream_value(value) for key, value in case["expected"].items()}, abs=1e-12)
    elif case["expected_over_golds_with_words"] is None:
        assert got == dict.fromkeys(ROUGE.values())
    else:
        assert got == pytest.approx(case["expected_over_golds_with_words"], abs=1e-12)


def test_a_gold_that_is_no_regular_expression_fails_the_score():
    example = Example(id="x", question="q", gold={"answers": ["19[0-9"]})
    with pytest.raises(ValueError, match="not a regular expression"):
        ExactMatch(regex=True).score(example, Prediction(example_id="x", answer="1902"))
    with pytest.raises(ValueError, match="not a regular expression"):
        CoverExactMatch(regex=True).score(example, Prediction(example_id="x", answer="1902"))


@pytest.mark.parametrize("metric", [ExactMatch, CoverExactMatch])
def test_a_gold_pattern_that_backtracks_catastrophically_fails_the_score_in_about_a_second(metric):
    """ "(.*){1,32000}[bc]" over 28 characters takes `re` about two minutes (2 s at 22, doubling with each one);
    FlashRAG hangs on it."""
    example = Example(id="x", question="q", gold={"answers": ["(.*){1,32000}[bc]"]})
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"took over 1 s to match \(a pattern that backtracks catastrophically\)"):
        metric(regex=True).score(example, Prediction(example_id="x", answer="a" * 28))
    assert time.perf_counter() - started < 10


def test_without_gold_answers_nothing_is_scorable():
    example, prediction = Example(id="x", question="q", gold={"answers": []}), Prediction(example_id="x", answer="a")
    assert TokenPrecisionRecall().score(example, prediction) == {"precision": None, "recall": None}
    assert FlashRagRouge().score(example, prediction) == dict.fromkeys(ROUGE)
    assert FlashRagRetrieval().score(example, prediction) == {"retrieval_recall": None, "retrieval_precision": None}


def test_regex_is_recorded_in_the_metric_config():
    assert ExactMatch(regex=True).config() == {"name": "em", "normalize": "squad", "regex": True}
    assert ExactMatch().config() == {"name": "em", "normalize": "squad"}
    assert CoverExactMatch(regex=True).config() == {"name": "cover_em", "regex": True}

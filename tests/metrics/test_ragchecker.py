"""`ragchecker` against RAGChecker 0.1.9 with RefChecker 0.2.17 run unmodified on the same RAG results with the
same scripted judge (tests/data/parity/ragchecker.json): the prompts it sends, the claims and labels it reads
from the replies, and the numbers it computes per example and averaged."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections import Counter

import pytest

from conftest import ROOT, TEST_DATA
from ragbench.api import Document, EngineError, Example, Prediction
from ragbench.metrics.ragchecker.claims import parse_labels, parse_triplets
from ragbench.metrics.ragchecker.metric import RagChecker
from ragbench.metrics.ragchecker.scores import KEYS, ragchecker_scores
from ragbench.testing import ScriptedLLM, make_context
from support.helpers import cli_here

PARITY = json.loads((TEST_DATA / "parity" / "ragchecker.json").read_text(encoding="utf-8"))
CASE = PARITY["cases"]["three_examples"]
GROUPS = ("overall_metrics", "retriever_metrics", "generator_metrics")


def example_and_prediction(result: dict) -> tuple[Example, Prediction]:
    """A RAGChecker input record as ragbench's example (gold answer) and prediction (response, chunks)."""
    example = Example(id=result["query_id"], question=result["query"], gold={"answers": [result["gt_answer"]]})
    docs = [Document(id=doc["doc_id"], title="", text=doc["text"]) for doc in result["retrieved_context"]]
    return example, Prediction(result["query_id"], answer=result["response"], docs=docs)


def scored(llm: ScriptedLLM, metric: RagChecker | None = None, judges: int = 1) -> tuple[dict, Counter]:
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[llm] * judges)
    ctx.count = lambda name: counted.update([name])

    async def all_examples():
        pairs = [example_and_prediction(r) for r in CASE["results"]]
        return {e.id: await (metric or RagChecker()).score(e, p, ctx) for e, p in pairs}

    return asyncio.run(all_examples()), counted


def judge() -> ScriptedLLM:
    return ScriptedLLM({rule["pattern"]: rule["response"] for rule in CASE["replies"]})


def test_the_judge_is_asked_exactly_the_prompts_upstream_sends():
    llm = judge()
    scored(llm)
    assert all(len(r.messages) == 1 and r.messages[0][0] == "user" for r in llm.requests)
    assert Counter(r.messages[0][1] for r in llm.requests) == Counter(CASE["prompts"])


def test_extraction_and_checking_use_refcheckers_sampling():
    llm = judge()
    scored(llm)
    extraction = [r.sampling for r in llm.requests if r.messages[0][1].endswith("### KG:\n")]
    checking = [r.sampling for r in llm.requests if not r.messages[0][1].endswith("### KG:\n")]
    assert len(extraction) == 6 and {(s.temperature, s.max_tokens) for s in extraction} == {(1e-5, 1000)}
    assert {(s.temperature, s.max_tokens) for s in checking} == {(0.0, 150)}


def test_each_example_scores_as_upstream_computes_it():
    scores, _ = scored(judge())
    for query_id, expected in CASE["per_example"].items():
        assert scores[query_id] == pytest.approx(expected), query_id


def test_the_means_are_upstreams_averages_over_examples():
    scores, _ = scored(judge())
    reported = {key: v for group in GROUPS for key, v in CASE["means"][group].items()}
    assert set(reported) == set(KEYS)
    for key in KEYS:
        assert round(sum(s[key] for s in scores.values()) / len(scores) * 100, 1) == reported[key], key


def test_padded_checking_replies_and_empty_extractions_are_counted():
    _, counted = scored(judge())
    assert counted == {"ragchecker_labels_padded": 1, "ragchecker_no_claims": 1}


def test_claims_and_labels_are_read_as_upstream_reads_them():
    upstream = CASE["judgements"]["1"]
    extraction = next(rule["response"] for rule in CASE["replies"] if "Hask hills" in rule["response"])
    assert [list(t) for t in parse_triplets(extraction)] == upstream["response_claims"]
    assert parse_labels("The labels: NEUTRAL neutral Contradiction Entailment", 3) == (
        ["Neutral", "Neutral", "Contradiction"],
        False,
    )
    assert parse_labels("Entailment", 3) == (["Entailment", "Neutral", "Neutral"], True)


def test_a_match_that_is_no_literal_takes_upstreams_split():
    # upstream's eval fails on the inner quotes too, and splits the match at ", "
    assert parse_triplets('("He said "hi"", "to", "Olm")') == [('"He said "hi""', '"to"', '"Olm"')]


@pytest.mark.parametrize(
    "reply, claims",
    [
        ('### ("a", "b", "c") and ("d", "e", "f")', [("d", "e", "f")]),
        ('### ("" or "a", "b", "c")', [("a", "b", "c")]),
        ('### ("a" + "b", "c", "d")', [("ab", "c", "d")]),
        ('### ("a", "b", "c") or ("d", "e", "f")', [("a", "b", "c")]),
    ],
)
def test_literals_joined_by_and_or_or_plus_read_as_upstreams_eval(reply, claims):
    """Values from RefChecker 0.2.17's ExtractorBase.parse_claims(reply, '###') run on these replies."""
    assert parse_triplets(reply) == claims


def test_a_reply_is_never_run_as_code():
    # upstream would eval this; read as text it is split, the call never made
    reply = '("" + __import__("os").getcwd() + "", "x", "y")'
    assert parse_triplets(reply) == [('"" + __import__("os").getcwd() + ""', '"x"', '"y"')]


def test_upstream_formulas_on_its_own_judgements():
    for query_id, judged in CASE["judgements"].items():
        scores = ragchecker_scores(
            judged["answer2response"],
            judged["response2answer"],
            judged["retrieved2answer"],
            judged["retrieved2response"],
        )
        assert scores == pytest.approx(CASE["per_example"][query_id]), query_id


def test_with_two_judges_the_first_extracts_and_the_second_checks():
    extractor, checker = judge(), judge()
    ctx = make_context("demo", judges=[extractor, checker])
    example, prediction = example_and_prediction(CASE["results"][0])
    asyncio.run(RagChecker().score(example, prediction, ctx))
    assert extractor.requests and all(r.messages[0][1].endswith("### KG:\n") for r in extractor.requests)
    assert checker.requests and not any(r.messages[0][1].endswith("### KG:\n") for r in checker.requests)


def test_a_failed_judge_call_fails_the_example_instead_of_scoring_it():
    def fail(request):
        raise EngineError("judge unreachable")

    example, prediction = example_and_prediction(CASE["results"][0])
    with pytest.raises(EngineError):
        asyncio.run(RagChecker().score(example, prediction, make_context("demo", judges=[ScriptedLLM(fail)])))


def test_a_prediction_whose_chunks_are_unknown_is_not_scored_as_retrieving_nothing():
    example, prediction = example_and_prediction(CASE["results"][0])
    prediction.extras["docs_unknown"] = True
    with pytest.raises(ValueError, match="chunks"):
        asyncio.run(RagChecker().score(example, prediction, make_context("demo", judges=[judge()])))


def test_without_a_judge_the_metric_names_the_option():
    example, prediction = example_and_prediction(CASE["results"][0])
    with pytest.raises(ValueError, match="--judge"):
        asyncio.run(RagChecker().score(example, prediction, make_context("demo")))


# docs/outputs.md, "A RAGChecker file": the task file and the conversion it documents
TASK_YAML = """task: ragchecker_results
description: RAG results in RAGChecker's input format, scored with its claim-level metrics
data: {path: ragchecker_input.json, format: json, records: results}
fields:
  id: query_id
  question: query
  gold: {answers: gt_answer}
prompt:
  template: "{{ question }}"
metrics: [ragchecker]
"""
TO_PREDICTIONS = (
    ".results[] | {id: .query_id, output: .response, "
    'docs: [.retrieved_context[] | {id: .doc_id, title: "", text: .text}]}'
)


def test_the_documented_conversion_is_the_one_tested():
    page = (ROOT / "docs" / "outputs.md").read_text(encoding="utf-8")
    assert TASK_YAML in page and f"jq -c '{TO_PREDICTIONS}'" in page


@pytest.mark.skipif(shutil.which("jq") is None, reason="the documented conversion runs jq")
def test_ragbench_score_of_a_ragchecker_file_gives_upstreams_means(tmp_path):
    (tmp_path / "ragchecker_input.json").write_text(json.dumps({"results": CASE["results"]}), encoding="utf-8")
    (tmp_path / "ragchecker_results.yaml").write_text(TASK_YAML, encoding="utf-8")
    (tmp_path / "judge.json").write_text(json.dumps(CASE["replies"]), encoding="utf-8")
    predictions = subprocess.run(
        ["jq", "-c", TO_PREDICTIONS, str(tmp_path / "ragchecker_input.json")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (tmp_path / "predictions.jsonl").write_text(predictions, encoding="utf-8")
    done = cli_here(
        "score",
        "--task",
        str(tmp_path / "ragchecker_results.yaml"),
        "--predictions",
        str(tmp_path / "predictions.jsonl"),
        "--judge",
        f"scripted:{tmp_path / 'judge.json'}",
        "--output",
        str(tmp_path / "run"),
    )
    assert done.returncode == 0, done.stderr
    values = json.loads((tmp_path / "run" / "results.json").read_text())["results"]["ragchecker_results"]
    reported = {key: v for group in GROUPS for key, v in CASE["means"][group].items()}
    assert {key: round(values[key] * 100, 1) for key in KEYS} == reported

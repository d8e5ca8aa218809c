"""The `browsecomp_plus` metric scores as texttron/BrowseComp-Plus's scripts_evaluation/evaluate_run.py.

tests/data/browsecomp_plus/parity/expected.json is the script's output (commit 97c637cebfd93965b28f93199e27abfd1dcc5de6,
run unchanged with numpy 2.4.6 on Python 3.11.7; its `vllm` replaced by a stand-in answering with
tests/support/browsecomp_plus_fake_judge.py) over the 320 run files of runs.jsonl (one file per line) and the checkout
layout beside it: per query its judge result, evidence recall and tool counts, and the summary. Here the same
judge (a ScriptedLLM running the same function) is asked by the metric, over the examples the task reads."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import Prediction
from ragbench.tasks.browsecomp_plus.grading import calibration_error, parse_judgement
from ragbench.tasks.browsecomp_plus.metric import BrowseCompPlusAgent, BrowseCompPlusJudge
from ragbench.tasks.browsecomp_plus.task import BrowseCompPlusTask
from ragbench.testing import ScriptedLLM, make_context
from support.browsecomp_plus_fake_judge import reply
from support.helpers import records_without_texts

PARITY = TEST_DATA / "browsecomp_plus" / "parity"


def expected() -> dict[str, Any]:
    return json.loads((PARITY / "expected.json").read_text(encoding="utf-8"))


def prediction(run: dict[str, Any]) -> Prediction:
    """A run file as ragbench holds it: evaluate_run.py's response (the last result item's output where it is
    output_text, else "") and what the agent did."""
    last = run["result"][-1] if run["result"] else {}
    answer = last["output"] if last.get("type") == "output_text" else ""
    return Prediction(
        run["query_id"],
        answer=answer,
        extras={key: run[key] for key in ("status", "retrieved_docids", "tool_call_counts")},
    )


@pytest.fixture(scope="module")
def scored() -> list[dict[str, Any]]:
    examples = {example.id: example for example in BrowseCompPlusTask(PARITY).examples()}
    runs = [json.loads(line) for line in (PARITY / "runs.jsonl").read_text(encoding="utf-8").splitlines()]
    metric, agent = BrowseCompPlusJudge(), BrowseCompPlusAgent()

    async def score_all() -> list[dict[str, Any]]:
        out = []
        for run in runs:
            ctx = make_context(BrowseCompPlusTask(PARITY), judges=[ScriptedLLM(reply)])
            example, predicted = examples[run["query_id"]], prediction(run)
            scores = {**agent.score(example, predicted), **await metric.score(example, predicted, ctx)}
            out.append({"id": run["query_id"], "scores": scores})
        return out

    return asyncio.run(score_all())


def test_each_query_is_judged_as_the_script_judges_it(scored):
    per_query = expected()["per_query"]
    for sample in scored:
        want, scores = per_query[sample["id"]], sample["scores"]
        judge = want["judge_result"]
        assert scores["accuracy"] == float(bool(judge.get("correct"))), sample["id"]
        confidence = judge.get("confidence") if not judge.get("parse_error") else None
        assert scores["confidence"] == confidence, sample["id"]
        assert scores["evidence_recall"] == pytest.approx(want["retrieval_recall"]), sample["id"]
        assert {tool: scores[f"{tool}_calls"] for tool in ("search", "get_document")} == {
            tool: float(want["tool_call_counts"].get(tool, 0)) for tool in ("search", "get_document")
        }


def test_the_summary_is_the_scripts(scored):
    summary = expected()["summary"]
    mean = {
        key: sum(s["scores"][key] for s in scored) / len(scored)
        for key in ("accuracy", "evidence_recall", "search_calls", "get_document_calls")
    }
    assert round(mean["accuracy"] * 100, 2) == summary["Accuracy (%)"]
    assert round(mean["evidence_recall"] * 100, 2) == summary["Recall (%)"]
    assert mean["search_calls"] == pytest.approx(summary["avg_tool_stats"]["search"])
    assert mean["get_document_calls"] == pytest.approx(summary["avg_tool_stats"]["get_document"])
    corpus = BrowseCompPlusJudge().corpus(records_without_texts(scored), seed=0)["calibration_error"]
    assert summary["Calibration Error (%)"] == 13.5  # two bins of 100 or more: the value is not hendrycks' 0
    assert round(corpus.value, 2) == summary["Calibration Error (%)"]


def test_gold_docids_come_from_the_queries_where_the_checkout_has_no_gold_qrels():
    example = next(iter(BrowseCompPlusTask(PARITY).examples()))
    record = json.loads((PARITY / "data" / "browsecomp_plus_decrypted.jsonl").read_text().splitlines()[0])
    assert example.gold["gold_docids"] == [doc["docid"] for doc in record["gold_docs"]]


@given(st.text(max_size=200))
def test_any_reply_reads_as_the_layouts_allow(text):
    judgement = parse_judgement(text)
    assert judgement.parse_error == (judgement.correct is None)
    assert judgement.confidence is None or 0 <= judgement.confidence <= 100


@given(
    st.lists(st.tuples(st.integers(0, 10000), st.booleans()), max_size=450, unique_by=lambda pair: pair[0]),
    st.randoms(),
)
def test_calibration_error_bins_by_confidence_and_leaves_the_last_bin_out(pairs, random):
    """hendrycks' calib_err in bins of 100 (pinned to the script above): with distinct confidences the order of
    the examples does not matter, and fewer than 200 give 0 (the one bin is the last, never added)."""
    shuffled = random.sample(pairs, len(pairs))
    value = calibration_error([c / 100 for c, _ in pairs], [r for _, r in pairs])
    assert value == pytest.approx(calibration_error([c / 100 for c, _ in shuffled], [r for _, r in shuffled]))
    if len(pairs) < 200:
        assert value == 0.0
    assert 0 <= value <= 100

"""The `ragas_*` metrics where the judge writes a 0/1 field (a verdict, `attributed`) as 2 or -1, against ragas
0.4.3 with instructor 1.17.0 run unmodified on the same replies (tests/data/parity/ragas_verdicts.json, recorded by
record_ragas_verdicts.py in a scratch virtualenv): ragas's output models take any integer and ragas does not bound
what it computes from them, so context precision and context recall give values outside [0, 1] (ragas's number,
recorded, not a failure), and faithfulness and factual correctness read the verdict as true or false."""

from __future__ import annotations

import asyncio
import json

import pytest

from conftest import TEST_DATA
from helpers import cli_here
from ragbench._metric import typed_scores
from ragbench.api import Document, Example, Prediction
from ragbench.metrics.ragas.metric import (
    RagasContextPrecision,
    RagasContextRecall,
    RagasFactualCorrectness,
    RagasFaithfulness,
)
from ragbench.testing import ScriptedLLM, make_context
from test_ragas_give_ups import score_args

RECORDED = json.loads((TEST_DATA / "parity" / "ragas_verdicts.json").read_text(encoding="utf-8"))
SAMPLE = RECORDED["sample"]
METRICS = {
    "faithfulness": RagasFaithfulness,
    "context_precision": RagasContextPrecision,
    "context_recall": RagasContextRecall,
    "factual_correctness": RagasFactualCorrectness,
}
CASES = [(upstream, written) for upstream, outcomes in RECORDED["outcomes"].items() for written in outcomes]


@pytest.mark.parametrize(("upstream", "written"), CASES)
def test_an_out_of_range_verdict_scores_ragas_number(upstream, written):
    """ragas's value from the same replies, asked in the same order, and a score the run records (within the
    metric's declared range: ragas does not clamp)."""
    recorded = RECORDED["outcomes"][upstream][written]
    metric = METRICS[upstream]()
    llm = ScriptedLLM(recorded["replies"])
    example = Example(id="s", question=SAMPLE["user_input"], gold={"answers": [SAMPLE["reference"]]})
    docs = [Document(id=str(i), title="", text=text) for i, text in enumerate(SAMPLE["retrieved_contexts"])]
    prediction = Prediction("s", answer=SAMPLE["response"], docs=docs)
    scores = asyncio.run(metric.score(example, prediction, make_context("demo", judges=[llm])))
    assert len(llm.requests) == len(recorded["replies"])
    assert scores[metric.name] == pytest.approx(recorded["value"], abs=1e-12)
    assert typed_scores(metric, scores) == scores


def test_a_run_records_ragas_context_precision_of_a_verdict_of_2(tmp_path):
    """`ragbench score` with a judge answering every context's verdict as 2: each example scored ragas's
    1.99999999995, no metric failure (it was `InvalidScore`, outside the declared [0, 1], on every --resume)."""
    verdict_2 = RECORDED["outcomes"]["context_precision"]["2"]
    (tmp_path / "judge.json").write_text(
        json.dumps([{"pattern": "", "response": verdict_2["replies"][0]}]), encoding="utf-8"
    )
    done = cli_here(*score_args(tmp_path, ["--judge", f"scripted:{tmp_path / 'judge.json'}"], "run"))
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "run" / "samples" / "ragas_give_up.jsonl").open()]
    assert [(row["scores"], row.get("score_errors")) for row in rows] == [
        ({"ragas_context_precision": pytest.approx(verdict_2["value"], abs=1e-12)}, None)
    ] * 2

"""The `ragas_*` metrics where the judge writes a 0/1 field (a verdict, `attributed`) as 2 or -1, against ragas
0.4.3 with instructor 1.17.0 run unmodified on the same replies (tests/data/parity/ragas_verdicts.json, recorded by
record_ragas_verdicts.py in a scratch virtualenv): ragas's output models take any integer and ragas does not bound
what it computes from them, so context precision and context recall give values outside [0, 1] (ragas's number,
recorded, not a failure), and faithfulness and factual correctness read the verdict as true or false, answer
relevancy a noncommittal 2 or -1 as noncommittal. Answer relevancy is below 0 where the judge's generated questions
are unrelated to the question (a negative cosine): ragas's number too."""

from __future__ import annotations

import asyncio
import json
import math
from collections import Counter

import pytest
from test_ragas_give_ups import score_args

from conftest import TEST_DATA
from ragbench.api import Document, Example, Prediction, key_spec
from ragbench.metrics.ragas.metric import (
    RagasContextPrecision,
    RagasContextRecall,
    RagasFactualCorrectness,
    RagasFaithfulness,
    RagasResponseRelevancy,
)
from ragbench.testing import ScriptedLLM, make_context
from support.helpers import cli_here

RECORDED = json.loads((TEST_DATA / "parity" / "ragas_verdicts.json").read_text(encoding="utf-8"))
SAMPLE = RECORDED["sample"]
METRICS = {
    "faithfulness": RagasFaithfulness,
    "context_precision": RagasContextPrecision,
    "context_recall": RagasContextRecall,
    "factual_correctness": RagasFactualCorrectness,
    "answer_relevancy": RagasResponseRelevancy,
}
CASES = [(upstream, written) for upstream, outcomes in RECORDED["outcomes"].items() for written in outcomes]


def recorded_as_given(metric, scores) -> bool:
    """A run records `scores` as they are: the metric's one key, its value None or a finite number within the range
    the metric declares for it (`key_spec`; a value outside fails the metric on that example)."""
    [(key, value)] = scores.items()
    return key == metric.name and (
        value is None or (math.isfinite(value) and key_spec(metric, metric.name).contains(value))
    )


@pytest.mark.parametrize(("upstream", "written"), CASES)
def test_a_verdict_out_of_0_1_or_an_unrelated_question_scores_ragas_number(upstream, written):
    """ragas's value from the same replies, asked in the same order, and a score the run records (ragas does not
    clamp: no declared range refuses it); where ragas's arithmetic overflows (a verdict past a float's range: it
    scores infinity or raises OverflowError), not scored and counted (`ragas_overflow`), never a failure."""
    recorded = RECORDED["outcomes"][upstream][written]
    metric = METRICS[upstream]()
    llm = ScriptedLLM(recorded["replies"])
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[llm])
    ctx.count = lambda name: counted.update([name])
    example = Example(id="s", question=SAMPLE["user_input"], gold={"answers": [SAMPLE["reference"]]})
    docs = [Document(id=str(i), title="", text=text) for i, text in enumerate(SAMPLE["retrieved_contexts"])]
    prediction = Prediction("s", answer=SAMPLE["response"], docs=docs)
    scores = asyncio.run(metric.score(example, prediction, ctx))
    assert len(llm.requests) == len(recorded["replies"])
    assert recorded_as_given(metric, scores)
    if "error" in recorded or math.isinf(recorded["value"]):
        assert recorded.get("error", "OverflowError") == "OverflowError"
        assert scores == {metric.name: None} and counted == {"ragas_overflow": 1}
        return
    # a cosine of the encoder's float32 embeddings to 1e-6 (as tests/metrics/test_ragas_metrics.py's tolerance says why)
    tolerance = 1e-6 if upstream == "answer_relevancy" else 1e-12
    assert scores[metric.name] == pytest.approx(recorded["value"], abs=tolerance) and not counted


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

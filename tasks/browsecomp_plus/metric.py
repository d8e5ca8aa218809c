"""`browsecomp_plus` and `browsecomp_plus_agent`: scripts_evaluation/evaluate_run.py's scores of one example,
the judge's (`--judge`, any engine) apart from those of what the agent did, which need no judge: a judge that
fails on an example fails its `browsecomp_plus` keys only, and recall and tool calls are kept without a rescore.

Per example, as the script computes them:
- `accuracy`: the judge said "correct: yes" (grading.py reads the reply). An output that is empty or whose
  status is not "completed" is not judged and counts 0, as does a reply with no verdict (counted,
  `browsecomp_plus_unparsed`). Several judges: the mean of their verdicts.
- `confidence`: the judge's reading of the response's confidence (None where not judged, not parsed or not
  given); `calibration_error` (corpus) is hendrycks' calib_err over the examples that have one (none where no
  example has one: the judge failed, or read no confidence, on every example).
`browsecomp_plus_agent`:
- `evidence_recall`, `gold_recall`: the share of the query's evidence (gold) docids among the docids the agent
  retrieved (the script reports evidence recall, over queries with evidence docids; None without).
- `search_calls`, `get_document_calls`: the agent's calls of BrowseComp-Plus's two tools.

What the agent did is read from the prediction's extras (RETRIEVED, TOOL_CALLS, STATUS; the search_agent system
and the recorded system's BrowseComp-Plus reader set them); without RETRIEVED, the documents shown count as
retrieved. The judge is sampled as the script samples Qwen3-32B (temperature 0.7, top_p 0.8, 4096 tokens; its
top_k 20 and enable_thinking False are the judge engine's options). The script multiplies by 100 and rounds to
2 decimals; ragbench reports the fractions unrounded (calibration error in percent, as the script).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from ragbench.api import CorpusValue, Example, KeySpec, Metric, MetricDeclaration, Prediction, SampleRecord, Scores
from ragbench.api.data import JsonObject

from .grading import calibration_error, grader_prompt, parse_judgement

RETRIEVED = "retrieved_docids"  # the union of docids the agent's searches returned
TOOL_CALLS = "tool_call_counts"  # tool name -> calls
STATUS = "status"  # "completed", or what ended the agent's loop
MODEL = "model"  # the agent's model, where a run file names it (metadata.model)
COMPLETED = "completed"
TOOLS = ("search", "get_document")
UNPARSED = "browsecomp_plus_unparsed"


def recall(retrieved: set[str], relevant: list[str]) -> float | None:
    """The share of `relevant` among `retrieved`; None where nothing is relevant (the script divides by 0)."""
    return len(retrieved & set(relevant)) / len(relevant) if relevant else None


def retrieved_docids(prediction: Prediction) -> set[str]:
    if RETRIEVED in prediction.extras:
        return {str(docid) for docid in prediction.extras[RETRIEVED]}
    return {str(doc.id) for doc in prediction.docs if doc.id is not None}


class BrowseCompPlusAgent(Metric):
    """What the agent retrieved and called (no judge)."""

    name = "browsecomp_plus_agent"
    declares = MetricDeclaration(
        gold_needs=("evidence_docids", "gold_docids"),
        keys=("evidence_recall", "gold_recall", *(f"{tool}_calls" for tool in TOOLS)),
        value_range=(0, 1),
        key_specs={f"{tool}_calls": KeySpec(None, (0, None)) for tool in TOOLS},
    )

    def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        retrieved = retrieved_docids(prediction)
        calls = prediction.extras.get(TOOL_CALLS) or {}
        return {
            "evidence_recall": recall(retrieved, example.gold["evidence_docids"]),
            "gold_recall": recall(retrieved, example.gold["gold_docids"]),
            **{f"{tool}_calls": float(calls.get(tool, 0)) for tool in TOOLS},
        }


class BrowseCompPlusJudge(Metric):
    name = "browsecomp_plus"
    declares = MetricDeclaration(
        gold_needs=("answers",),
        needs=("judge",),
        keys=("accuracy", "confidence"),
        corpus_keys=("calibration_error",),
        value_range=(0, 1),
        key_specs={
            "confidence": KeySpec(None, (0, 100)),
            "calibration_error": KeySpec(False, (0, 100)),
        },
        counters={
            UNPARSED: "judge replies with no 'correct: yes|no' (evaluate_run.py's parse error), scored incorrect"
        },
    )
    judge_sampling: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {"temperature": 0.7, "top_p": 0.8, "max_tokens": 4096}
    )

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        if not prediction.answer or prediction.extras.get(STATUS, COMPLETED) != COMPLETED:
            return {"accuracy": 0.0, "confidence": None}
        prompt = grader_prompt(example.question, prediction.answer, example.gold["answers"][0])
        replies = await ctx.ask_judges(self, [{"role": "user", "content": prompt}], **self.judge_sampling)
        judgements = [parse_judgement(reply.text) for reply in replies]
        for _ in range(sum(judgement.parse_error for judgement in judgements)):
            ctx.count(UNPARSED)
        confidences = [j.confidence for j in judgements if not j.parse_error and j.confidence is not None]
        return {
            "accuracy": sum(bool(j.correct) for j in judgements) / len(judgements),
            "confidence": sum(confidences) / len(confidences) if confidences else None,
        }

    def corpus(self, samples: list[SampleRecord], seed: int) -> dict[str, CorpusValue]:
        """calib_err over the examples with a confidence, in the examples' order; none without one."""
        pairs = [
            (confidence, accuracy)
            for s in samples
            if (confidence := s.scores.get("confidence")) is not None
            and (accuracy := s.scores.get("accuracy")) is not None  # every scored sample has one
        ]
        if not pairs:
            return {"calibration_error": CorpusValue(None, 0)}
        return {
            "calibration_error": CorpusValue(
                calibration_error([c for c, _ in pairs], [a >= 0.5 for _, a in pairs]), len(pairs)
            )
        }

    def config(self) -> JsonObject:
        return {"name": self.name, "judge_sampling": dict(self.judge_sampling)}

"""BrowseComp-Plus's leaderboard files from a finished ragbench run of `browsecomp_plus` (its README at 97c637c,
"Submitting to the Leaderboard" and "Submitting Retrieval-Only Results To The Leaderboard"):

- the agent submission, the summary scripts_evaluation/evaluate_run.py writes (evaluation_summary.json), from
  the run's `browsecomp_plus` scores: accuracy, evidence recall and calibration error in percent rounded to 2
  decimals as the script rounds them, the mean calls per tool over all queries, one entry per query;
- the retrieval-only submission: nDCG@10 and Recall@5, @100, @1000 of the run's TREC run file against the
  evidence and the gold qrels, as `trec_eval -c` prints them (4 decimals);
- each query's run file in the README's "Evaluation" format, where the system recorded one (`search_agent`), for
  evaluate_run.py to judge again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ragbench.api import SampleRecord

from .metric import RETRIEVED, STATUS, TOOL_CALLS

UNSET = "change me when submitting"  # evaluate_run.py's value of the fields a submitter fills in
TREC_MEASURES = ("ndcg_cut.10", "recall.5,100,1000")  # the README's trec_eval command
RETRIEVAL_FIELDS = {"nDCG@10": "ndcg_cut_10", **{f"Recall@{k}": f"recall_{k}" for k in (5, 100, 1000)}}


def percent(value: float | None) -> float | None:
    """A fraction as evaluate_run.py reports it: in percent, rounded to 2 decimals."""
    return None if value is None else round(value * 100.0, 2)


def correct(record: SampleRecord) -> bool:
    """The judges' verdict: "correct: yes" (of several judges, most of them)."""
    return (record.scores.get("accuracy") or 0.0) >= 0.5


def mean_tool_calls(records: list[SampleRecord]) -> dict[str, float]:
    """evaluate_run.py's avg_tool_stats: each tool's calls over all queries (any tool name the run file counts),
    divided by the number of queries, tools in the order first met."""
    totals: dict[str, float] = {}
    for record in records:
        for tool, count in (record.extras.get(TOOL_CALLS) or {}).items():
            totals[tool] = totals.get(tool, 0) + count
    return {tool: total / len(records) for tool, total in totals.items()}


def agent_submission(
    records: list[SampleRecord], calibration_error: float | None, names: Mapping[str, str], date: str
) -> dict[str, Any]:
    """evaluate_run.py's summary of the scored records (`names`: "LLM", "Retriever", "Link")."""
    recalls = [recall for r in records if (recall := r.scores.get("evidence_recall")) is not None]
    return {
        "LLM": names["LLM"],
        "Accuracy (%)": percent(sum(map(correct, records)) / len(records)),
        "Recall (%)": percent(sum(recalls) / len(recalls)) if recalls else None,
        "avg_tool_stats": mean_tool_calls(records),
        "Calibration Error (%)": None if calibration_error is None else round(calibration_error, 2),
        "Retriever": names["Retriever"],
        "Link": names["Link"],
        "Evaluation Date": date,
        "per_query_metrics": [
            {"query_id": r.id, "correct": correct(r), "recall": percent(r.scores.get("evidence_recall"))}
            for r in records
        ],
    }


def retrieval_submission(
    values: Mapping[str, Mapping[str, float]], names: Mapping[str, str], date: str
) -> dict[str, Any]:
    """The README's retrieval-only JSON from trec_eval's values per qrels ("Evidence", "Gold")."""
    scores = {
        f"{qrels} {field}": round(values[qrels][key], 4)
        for qrels in ("Evidence", "Gold")
        for field, key in RETRIEVAL_FIELDS.items()
    }
    return {"Retriever": names["Retriever"], **scores, "Link": names["Link"], "Evaluation Date": date}


def run_file(record: SampleRecord, model: str) -> dict[str, Any] | None:
    """The query's run file in the README's "Evaluation" format, from what the system recorded (None where it
    recorded no `result` list: a system other than search_agent)."""
    extras = record.extras
    if not isinstance(extras.get("result"), list) or STATUS not in extras:
        return None
    return {
        "metadata": {"model": model},
        "query_id": record.id,
        "tool_call_counts": extras.get(TOOL_CALLS) or {},
        "status": extras[STATUS],
        "retrieved_docids": list(extras.get(RETRIEVED) or []),
        "result": extras["result"],
    }


def binary_qrels(relevant: Iterable[tuple[str, list[str]]]) -> dict[str, dict[str, int]]:
    """Query id -> docid -> 1, for the queries with a relevant docid (a qrels file's queries)."""
    return {qid: dict.fromkeys(docids, 1) for qid, docids in relevant if docids}

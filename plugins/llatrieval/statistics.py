"""LLatrieval's run statistics: the paper's Tables 4-6 figures and the cost per example."""

from __future__ import annotations

from statistics import mean

from ragbench.api import SampleRecord
from ragbench.api.data import JsonObject

STEPS = ("hyde_query", "summarize", "select", "verify", "update_query", "answer")


def run_statistics(
    samples: list[SampleRecord], use_sub_questions: bool, verification: str, query_style: str, max_iterations: int
) -> JsonObject | None:
    """The paper's Tables 4-6 figures (document candidates = new candidates browsed per example, 50 per
    iteration; examples per iteration) and the cost per example."""
    done = [s for s in samples if s.error is None and "llatrieval" in s.extras]
    if not done:
        return None
    runs = [s.extras["llatrieval"]["iterations"] for s in done]
    llm_steps = [[step for step in s.trace if step.kind == "llm"] for s in done]
    verdicts = [it["verification"] for run in runs for it in run if it["verification"]]
    retrievers = {step.request.get("retriever") for s in done for step in s.trace if step.kind == "retrieval"}
    stats: JsonObject = {
        "examples": len(done),
        "use_sub_questions": use_sub_questions,
        "verification": verification,
        "query_style": query_style,
        "document_candidates_per_example": round(mean(sum(it["new_candidates"] for it in run) for run in runs), 2),
        "examples_per_iteration": {str(t + 1): sum(1 for run in runs if len(run) > t) for t in range(max_iterations)},
        "passed_verification_per_iteration": {
            str(t + 1): sum(1 for run in runs if len(run) == t + 1 and (run[-1]["verification"] or {}).get("passed"))
            for t in range(max_iterations - 1)
        },
        "never_verified": sum(1 for run in runs if run[-1]["verification"] is None),
        "llm_calls_per_example": {
            "total": round(mean(len(steps) for steps in llm_steps), 2),
            **{
                name: round(mean(sum(1 for step in steps if step.name == name) for steps in llm_steps), 2)
                for name in STEPS
            },
        },
        "prompt_tokens_per_example": round(mean(sum(step.prompt_tokens for step in steps) for steps in llm_steps), 1),
        "completion_tokens_per_example": round(
            mean(sum(step.completion_tokens for step in steps) for steps in llm_steps), 1
        ),
        "windows_shortened_by_token_guard": sum(
            1 for run in runs for it in run for w in it["windows"] if w.get("deferred")
        ),
    }
    if verification == "score":
        stats["unparsed_scores"] = sum(1 for v in verdicts if v.get("score") is None)
    if retrievers == {"provided"}:
        stats["note"] = (
            "retriever 'provided' answers every query with the example's own ALCE documents: "
            "updated queries find nothing new; pass --retriever bm25|dense with an index"
        )
    return stats

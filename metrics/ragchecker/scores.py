"""RAGChecker's eleven metrics of one example from its four claim judgements, as ragchecker/computation.py
(RAGChecker 0.1.9) defines them. A judgement is a label per claim (`answer2response`: each response
claim against the gold answer; `response2answer`: each gold claim against the response) or a label per
claim and retrieved chunk (`retrieved2answer`, `retrieved2response`); only "Entailment" counts as true.
Where upstream finds nothing to average (no claims, no chunks) the metric is 0, as upstream sets it.
Upstream then averages each metric over the examples (x100, one decimal): ragbench's mean."""

from __future__ import annotations

from ragbench.api import Scores

from .claims import ENTAILMENT

KEYS = (
    "precision",
    "recall",
    "f1",
    "claim_recall",
    "context_precision",
    "context_utilization",
    "noise_sensitivity_in_relevant",
    "noise_sensitivity_in_irrelevant",
    "hallucination",
    "self_knowledge",
    "faithfulness",
)


def _mean(flags: list[bool]) -> float:
    return sum(flags) / len(flags)


def _entailed(labels: list[str]) -> list[bool]:
    return [label == ENTAILMENT for label in labels]


def ragchecker_scores(
    answer2response: list[str],
    response2answer: list[str],
    retrieved2answer: list[list[str]],
    retrieved2response: list[list[str]],
) -> Scores:
    correct = _entailed(answer2response)  # per response claim
    covered = _entailed(response2answer)  # per gold claim
    gold_in_chunk = [_entailed(row) for row in retrieved2answer]  # [gold claim][chunk]
    response_in_chunk = [_entailed(row) for row in retrieved2response]  # [response claim][chunk]
    out: Scores = dict.fromkeys(KEYS, 0.0)

    precision = _mean(correct) if correct else 0.0
    recall = _mean(covered) if covered else 0.0
    out["precision"], out["recall"] = precision, recall
    if precision > 0 and recall > 0:
        out["f1"] = 2 * precision * recall / (precision + recall)

    if gold_in_chunk and gold_in_chunk[0]:
        recalled = [any(row) for row in gold_in_chunk]
        relevant_chunk = [any(column) for column in zip(*gold_in_chunk)]
        out["claim_recall"] = _mean(recalled)
        out["context_precision"] = _mean(relevant_chunk)
        if any(recalled):
            out["context_utilization"] = sum(r and c for r, c in zip(recalled, covered)) / sum(recalled)

    if correct and response_in_chunk[0]:
        faithful = [any(row) for row in response_in_chunk]
        out["hallucination"] = _mean([not f and not c for f, c in zip(faithful, correct)])
        out["self_knowledge"] = _mean([not f and c for f, c in zip(faithful, correct)])
        if gold_in_chunk:
            relevant_chunk = [any(column) for column in zip(*gold_in_chunk)]
            from_relevant = [any(r and e for r, e in zip(relevant_chunk, row)) for row in response_in_chunk]
            # a claim found in a relevant chunk counts there only (upstream keeps the two exclusive)
            from_irrelevant = [
                not fr and any(not r and e for r, e in zip(relevant_chunk, row))
                for fr, row in zip(from_relevant, response_in_chunk)
            ]
            out["noise_sensitivity_in_relevant"] = _mean([f and not c for f, c in zip(from_relevant, correct)])
            out["noise_sensitivity_in_irrelevant"] = _mean([f and not c for f, c in zip(from_irrelevant, correct)])

    if response_in_chunk and response_in_chunk[0]:
        out["faithfulness"] = _mean([any(row) for row in response_in_chunk])
    return out

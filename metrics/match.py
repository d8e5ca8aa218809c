"""Answer matching as Self-RAG computes it (retrieval_lm/metrics.py, run_short_form.py), plus a
normalised variant. Upstream functions are reproduced exactly, quirks included; the tests pin
them to values produced by running the upstream code."""
from __future__ import annotations

from collections import Counter

from ragbench.api import Example, Metric, Prediction, Score, normalize_answer


def raw_match(prediction: str, golds: list[str]) -> int:
    """Self-RAG `match`: 1 if any gold is a raw, case-sensitive substring of the prediction."""
    return int(any(gold in prediction for gold in golds))


def exact_match(prediction: str, gold: str) -> bool:
    return normalize_answer(prediction) == normalize_answer(gold)


def token_f1(prediction: str, gold: str) -> float:
    """Self-RAG `qa_f1_score` (SQuAD token F1)."""
    predicted, expected = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def golds_of(example: Example) -> list[str]:
    return list(example.gold.get("answers") or [])


class AnswerMetric(Metric):
    """A metric of the answer against the gold answers, valued in [0, 1] (1 is right)."""

    gold_needs = ("answers",)
    value_range = (0, 1)


class Match(AnswerMetric):
    name = "match"
    def score(self, example: Example, prediction: Prediction, ctx=None) -> Score:
        return float(raw_match(prediction.answer, golds_of(example)))


class SelfRagMatch(AnswerMetric):
    """run_short_form.py main(), per row: drop a leading "#" or ":", turn an output containing
    "SUPPORTS" into "true" (else "REFUTES" into "false") whatever the task, then `match`.
    Upstream crashes on an empty output (IndexError); here it scores 0."""

    name = "selfrag_match"
    def score(self, example: Example, prediction: Prediction, ctx=None) -> Score:
        text = prediction.answer
        if not text:
            return 0.0
        if text[0] in "#:":
            text = text[1:]
        if "SUPPORTS" in text:
            text = "true"
        elif "REFUTES" in text:
            text = "false"
        return float(raw_match(text, golds_of(example)))


class NormalizedMatch(AnswerMetric):
    """Fixed `match`: SQuAD-normalised gold inside the SQuAD-normalised output, on word boundaries
    ("pol" no longer matches "police"); empty golds are ignored."""

    name = "match_normalized"
    def score(self, example: Example, prediction: Prediction, ctx=None) -> Score:
        output = f" {normalize_answer(prediction.answer)} "
        golds = [normalize_answer(g) for g in golds_of(example)]
        return float(any(gold and f" {gold} " in output for gold in golds))


class ExactMatch(AnswerMetric):
    """Self-RAG `metric_max_over_ground_truths(exact_match_score, ...)`. No golds: not scorable
    (upstream raises)."""

    name = "em"
    def score(self, example: Example, prediction: Prediction, ctx=None) -> Score:
        golds = golds_of(example)
        return float(max(exact_match(prediction.answer, g) for g in golds)) if golds else None


class TokenF1(AnswerMetric):
    name = "f1"
    def score(self, example: Example, prediction: Prediction, ctx=None) -> Score:
        golds = golds_of(example)
        return max(token_f1(prediction.answer, g) for g in golds) if golds else None

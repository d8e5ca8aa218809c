"""HotpotQA's sentence-level supporting-fact and joint metrics (hotpotqa/hotpot hotpot_evaluate_v1.py
`update_sp` and its joint scores), per example; tests/metrics/test_supporting_facts.py pins them to values from running
that file.

A system predicts supporting facts as HotpotQA's prediction file does: `[[title, sentence index], ...]`, in
`Prediction.extras["supporting_facts"]` (a `ragbench score` predictions line gives them as "supporting_facts").
sp_em/sp_f1/sp_prec/sp_recall compare the set of predicted facts with the record's `supporting_facts`; the joint
scores combine them with the answer's as the script does: joint_prec = prec x sp_prec, joint_recall = recall x
sp_recall, joint_f1 their F1, joint_em = em x sp_em (the answer's em, precision and recall as
`update_answer` computes them, with the yes/no rule; the best over the gold answers, as 2WikiMultihopQA's
evaluation takes them: HotpotQA has one). A prediction without supporting facts scores 0 on every key, as the
script scores an id missing from its "sp", and is counted (`hotpot_sp_missing`)."""

from __future__ import annotations

from typing import Any

from ragbench.api import Example, Metric, MetricDeclaration, Prediction, Scores, ScoringContext
from ragbench.api.text import normalize_answer

from .flashrag import token_precision_recall
from .match import golds_of

SUPPORTING_FACTS = "supporting_facts"  # Prediction.extras key: [[title, sentence index], ...]
NOT_PREDICTED = "hotpot_sp_missing"
Fact = tuple[str, int]


def gold_facts(value: Any) -> set[Fact]:
    """The record's supporting facts as (title, sentence index) pairs, from HotpotQA's `supporting_facts`
    ([[title, index], ...]) or its column form ({"title": [...], "sent_id": [...]}: Hugging Face, FlashRAG)."""
    if isinstance(value, dict):
        return {(str(title), int(index)) for title, index in zip(value.get("title") or [], value.get("sent_id") or [])}
    return {(str(item[0]), int(item[1])) for item in value or [] if isinstance(item, (list, tuple)) and len(item) == 2}


def predicted_facts(prediction: Prediction) -> set[Fact] | None:
    """The prediction's supporting facts, None where it has none; raises ValueError on another shape (the metric
    fails on the example, counted, rather than scoring a misread prediction)."""
    value = prediction.extras.get(SUPPORTING_FACTS)
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(item, (list, tuple))
        and len(item) == 2
        and isinstance(item[0], str)
        and isinstance(item[1], int)
        and not isinstance(item[1], bool)
        for item in value
    ):
        raise ValueError(
            f'extras["{SUPPORTING_FACTS}"] must be a list of [title, sentence index] pairs, got {str(value)[:80]}'
        )
    return {(title, index) for title, index in value}


def set_scores(predicted: set[Fact], gold: set[Fact]) -> tuple[float, float, float, float]:
    """`update_sp`: (em, f1, precision, recall) of the predicted facts against the gold ones."""
    hits = len(predicted & gold)
    precision = hits / len(predicted) if predicted else 0.0
    recall = hits / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return float(predicted == gold), f1, precision, recall


def answer_scores(answer: str, golds: list[str]) -> tuple[float, float, float]:
    """`update_answer`: (em, precision, recall) of the answer, each the best over the gold answers."""
    em = max(float(normalize_answer(answer) == normalize_answer(gold)) for gold in golds)
    pairs = [token_precision_recall(answer, gold) for gold in golds]
    return em, max(p for p, _ in pairs), max(r for _, r in pairs)


class HotpotSupportingFacts(Metric):
    name = "hotpot_supporting_facts"
    declares = MetricDeclaration(
        keys=("sp_em", "sp_f1", "sp_prec", "sp_recall", "joint_em", "joint_f1", "joint_prec", "joint_recall"),
        gold_needs=("answers", "supporting_passages"),
        value_range=(0, 1),
        counters={
            NOT_PREDICTED: f'predictions without supporting facts (extras["{SUPPORTING_FACTS}"]), scored 0 as '
            "hotpot_evaluate_v1.py scores an id missing from its sp"
        },
    )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        gold, golds = gold_facts(example.gold.get("supporting_passages")), golds_of(example)
        if not gold or not golds:
            return dict.fromkeys(self.declares.keys)
        predicted = predicted_facts(prediction)
        if predicted is None:
            getattr(ctx, "count", lambda name: None)(NOT_PREDICTED)
            return dict.fromkeys(self.declares.keys, 0.0)
        sp_em, sp_f1, sp_prec, sp_recall = set_scores(predicted, gold)
        em, prec, recall = answer_scores(prediction.answer, golds)
        joint_prec, joint_recall = prec * sp_prec, recall * sp_recall
        joint_f1 = 2 * joint_prec * joint_recall / (joint_prec + joint_recall) if joint_prec + joint_recall > 0 else 0.0
        return {
            "sp_em": sp_em,
            "sp_f1": sp_f1,
            "sp_prec": sp_prec,
            "sp_recall": sp_recall,
            "joint_em": em * sp_em,
            "joint_f1": joint_f1,
            "joint_prec": joint_prec,
            "joint_recall": joint_recall,
        }

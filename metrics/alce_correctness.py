"""ALCE answer correctness (princeton-nlp/ALCE eval.py, commit 246c476): length, str_em/str_hit
(ASQA), the QAMPARI list metrics and claims_nli (ELI5).

All of them score the citation-free output (`remove_citations` of the task's truncated answer)
and report upstream's scale (x100, except `length` and `num_preds`). Where upstream divides by
zero or averages an empty list (no qa_pairs, no gold answers, no claims) the item is not
scorable (None) here.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ragbench.api import Example, KeySpec, Metric, MetricDeclaration, Prediction, Score, Scores, ScoringContext
from ragbench.api.data import JsonObject
from ragbench.api.text import exact_presence, list_items, normalize_answer, remove_citations


def citation_free(prediction: Prediction) -> str:
    return remove_citations(prediction.answer)


class Length(Metric):
    """eval.py `compute_len`: words (whitespace split) of the citation-free output."""

    name = "length"
    declares = MetricDeclaration(
        higher_is_better=None,  # descriptive: ALCE reports it beside the scores, neither way is better
        value_range=(0, None),
    )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Score:
        return float(len(citation_free(prediction).split()))


class StrEm(Metric):
    """eval.py `compute_str_em` (ASQA): share of qa_pairs with an alias in the output, and
    str_hit = 100 when all of them are."""

    name = "str_em"
    declares = MetricDeclaration(
        gold_needs=("qa_pairs",),
        keys=("str_em", "str_hit"),
        value_range=(0, 100),
    )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        qa_pairs = example.gold.get("qa_pairs") or []
        if not qa_pairs:
            return {"str_em": None, "str_hit": None}
        output = citation_free(prediction)
        found = [exact_presence(pair["short_answers"], output) for pair in qa_pairs]
        share = sum(found) / len(found)
        return {"str_em": 100 * share, "str_hit": 100.0 * int(share == 1)}


def list_predictions(output: str) -> list[str]:
    """eval.py `compute_qampari_f1`: comma-separated, normalised, empty pieces dropped (duplicates stay)."""
    preds = [normalize_answer(piece.strip()) for piece in list_items(output)]
    return [pred for pred in preds if len(pred) > 0]


def _harmonic(precision: float, recall: float) -> float:
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


class QampariF1(Metric):
    """eval.py `compute_qampari_f1`: exact matches of normalised answers against any alias;
    rec_top5 counts at most 5 hits out of at most 5 gold answers."""

    name = "qampari"
    declares = MetricDeclaration(
        gold_needs=("answer_lists",),
        keys=("qampari_prec", "qampari_rec", "qampari_rec_top5", "qampari_f1", "qampari_f1_top5", "num_preds"),
        value_range=(0, 100),
        key_specs={"num_preds": KeySpec(None, (0, None))},  # how many answers the list gives: descriptive
    )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        answers = [[normalize_answer(alias) for alias in aliases] for aliases in example.gold.get("answers") or []]
        preds = list_predictions(citation_free(prediction))
        if not answers:
            return {key: (float(len(preds)) if key == "num_preds" else None) for key in self.declares.keys}
        flat = [alias for aliases in answers for alias in aliases]
        hits = sum(any(alias in preds for alias in aliases) for aliases in answers)
        precision = sum(pred in flat for pred in preds) / len(preds) if preds else 0
        recall = hits / len(answers)
        recall_top5 = min(5, hits) / min(5, len(answers))
        return {
            "qampari_prec": 100 * precision,
            "qampari_rec": 100 * recall,
            "qampari_rec_top5": 100 * recall_top5,
            "qampari_f1": 100 * _harmonic(precision, recall),
            "qampari_f1_top5": 100 * _harmonic(precision, recall_top5),
            "num_preds": float(len(preds)),
        }


class ClaimsNli(Metric):
    """eval.py `compute_claims` (ELI5): share of the gold claims the output entails. The premise
    is `remove_citations` applied twice, as upstream does (once to all outputs, once more here),
    which differs from once on outputs such as "[[1]2]"."""

    name = "claims_nli"
    declares = MetricDeclaration(
        gold_needs=("claims",),
        needs=("nli",),
        value_range=(0, 100),
    )

    async def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Score:
        claims = example.gold.get("claims") or []
        if not claims:
            return None
        premise = remove_citations(citation_free(prediction))
        entailed: list[bool] = await asyncio.gather(*(ctx.nli.entails(premise, claim) for claim in claims))
        return 100 * sum(entailed) / len(claims)

    def config(self) -> JsonObject:
        return {"name": self.name}

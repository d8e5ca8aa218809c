"""The open-domain and multi-hop QA metrics of FlashRAG, HotpotQA, 2WikiMultihopQA and MuSiQue that
`match.py` does not already compute (its `em` and `f1` are theirs too: SQuAD-normalised exact match
and token F1, max over the gold answers). The tests pin each to values from running the upstream code."""

from __future__ import annotations

from typing import Any

from ragbench.api import ConfigError, Example, Metric, MetricDeclaration, Prediction, Score, Scores, ScoringContext
from ragbench.api.data import JsonObject
from ragbench.api.text import normalize_answer, token_f1

from .match import AnswerMetric, gold_matches, golds_of, regex_module

YES_NO_ANSWERS = ("yes", "no", "noanswer")


class CoverExactMatch(AnswerMetric):
    """FlashRAG's `acc` (`Sub_ExactMatch`, flashrag/evaluator/metrics.py), "cover EM": 1 when a
    SQuAD-normalised gold answer is a substring of the SQuAD-normalised output (Self-RAG's `match` is
    the raw, case-sensitive form). As upstream: a character substring, not whole words ("pol" is
    covered by "police"; `match_normalized` is the whole-word variant), and a gold that normalises to
    "" covers every output. No gold answers: not scorable (upstream scores 0). `regex=true`: a gold
    pattern found in the normalised output (FlashRAG on CuratedTREC, `re.search`)."""

    name = "cover_em"

    def __init__(self, regex: bool = False) -> None:
        self.regex = bool(regex)
        if self.regex:
            regex_module(self.name)

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Score:
        golds = golds_of(example)
        if not golds:
            return None
        output = normalize_answer(prediction.answer)
        if self.regex:
            return float(any(gold_matches(gold, output, whole=False) for gold in golds))
        return float(any(normalize_answer(gold) in output for gold in golds))

    def config(self) -> JsonObject:
        return {"name": self.name, "regex": True} if self.regex else {"name": self.name}


def yes_no_mismatch(prediction: str, gold: str) -> bool:
    """hotpot_evaluate_v1.py's rule (FlashRAG's `token_level_scores` too): when the normalised prediction
    or gold is yes, no or noanswer, anything but the same word scores 0."""
    normalized_prediction, normalized_gold = normalize_answer(prediction), normalize_answer(gold)
    return normalized_prediction != normalized_gold and (
        normalized_prediction in YES_NO_ANSWERS or normalized_gold in YES_NO_ANSWERS
    )


def hotpot_f1(prediction: str, gold: str) -> float:
    """hotpot_evaluate_v1.py `f1_score`: SQuAD token F1 with the yes/no rule."""
    return 0.0 if yes_no_mismatch(prediction, gold) else token_f1(prediction, gold)


class HotpotF1(AnswerMetric):
    """Answer F1 as HotpotQA's hotpot_evaluate_v1.py computes it, max over the gold answers as
    2WikiMultihopQA's evaluation (over the answer's aliases) and FlashRAG's `f1` (over golden_answers)
    do: `f1` plus the yes/no rule ("yes, it is" against the gold "yes" scores 0, not 0.5). No gold
    answers: not scorable."""

    name = "hotpot_f1"

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Score:
        golds = golds_of(example)
        return max(hotpot_f1(prediction.answer, gold) for gold in golds) if golds else None


def supporting_keys(value: Any, by: str) -> set[str]:
    """The supporting passages of a record, by title or id (`by`), from the shapes the sets ship:
    HotpotQA's and 2Wiki's `supporting_facts` ([[title, sentence index], ...]) or their column form
    ({"title": [...], "sent_id": [...]}: Hugging Face, FlashRAG); MuSiQue's `paragraphs` (those with
    `is_supporting`; `idx` is the id) or FlashRAG's MuSiQue `question_decomposition` (each step's
    `support_paragraph`); or a plain list of titles or ids."""
    if isinstance(value, dict):
        return {str(title) for title in value.get("title") or []}
    keys = set()
    for item in value or []:
        if isinstance(item, dict):
            paragraph = item.get("support_paragraph", item)
            if "support_paragraph" in item or paragraph.get("is_supporting"):
                key = paragraph.get("idx" if by == "id" else "title")
                if key is not None:
                    keys.add(str(key))
        elif isinstance(item, (list, tuple)):
            keys.add(str(item[0]))
        else:
            keys.add(str(item))
    return keys


class SupportingPassages(Metric):
    """Supporting-passage precision, recall, F1 and exact match of the documents the system showed (the
    prediction's documents), as HotpotQA's `update_sp` and MuSiQue's `SupportMetric` (evaluate_v1.0.py,
    paragraph-level "support F1") compute them on sets: recall is the share of the supporting passages
    shown, precision the share of the shown passages that support, EM 1 when the two sets are equal.
    A passage is named by its title (`by=title`, HotpotQA and 2Wiki, whose supporting facts name
    titles; here at passage level, not HotpotQA's sentence level) or its id (`by=id`, MuSiQue's
    paragraph `idx`). Nothing shown scores 0; a record without supporting passages is not scorable, and
    outputs scored from a predictions file that does not say which documents were shown fail (counted)."""

    name = "supporting_passages"
    declares = MetricDeclaration(
        keys=("support_recall", "support_precision", "support_f1", "support_em"),
        gold_needs=("supporting_passages",),
        higher_is_better=True,
        value_range=(0, 1),
    )

    def __init__(self, by: str = "title") -> None:
        if by not in ("title", "id"):
            raise ConfigError(f"metric supporting_passages: by '{by}' is not title or id")
        self.by = by

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        gold = supporting_keys(example.gold.get("supporting_passages"), self.by)
        if not gold:
            return dict.fromkeys(self.declares.keys)
        docs = prediction.shown_docs("supporting passages")
        shown = {str(key) for key in (doc.title if self.by == "title" else doc.id for doc in docs) if key is not None}
        hits = len(shown & gold)
        precision = hits / len(shown) if shown else 0.0
        recall = hits / len(gold)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
        return {
            "support_recall": recall,
            "support_precision": precision,
            "support_f1": f1,
            "support_em": float(shown == gold),
        }

    def config(self) -> JsonObject:
        return {"name": self.name, "by": self.by}

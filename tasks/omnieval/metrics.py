"""OmniEval's rule metrics (RUC-NLPIR/OmniEval utils/evaluation.py and evaluator/judgement/judger.py):
Rouge-1/2/L (rouge-chinese over jieba words, raw text), character-level F1 over jieba-joined
normalised text, EM averaged over the answer forms, and the retrieval MAP / MRR over the shown
documents. Per sample each rouge part and F1 is the max over the golden answers."""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Any

from ragbench.api import ConfigError, Example, Metric, MetricDeclaration, Prediction, Scores
from ragbench.api.text import normalize_answer


@lru_cache(maxsize=1)
def _libs() -> tuple[Any, Any, Any]:
    try:
        import jieba
        import regex
        from rouge_chinese import Rouge
    except ImportError as exc:
        raise ConfigError(
            f"OmniEval metrics need jieba, regex and rouge-chinese ({exc}); run `pip install ragbench[omnieval]`"
        ) from exc
    jieba.setLogLevel(60)
    return jieba, Rouge(), regex.compile(r"\b(a|an|the)\b")


def normalize(text: str) -> str:
    """upstream utils/evaluation.py `normalize_answer`: SQuAD's, its articles matched with `regex`."""
    return normalize_answer(text, articles=_libs()[2])


def words(text: str) -> str:
    """jieba precise mode (HMM on), words joined by one space; whitespace is a word of its own."""
    return " ".join(_libs()[0].cut(text))


def char_f1(prediction: str, gold: str) -> float:
    """upstream f1_zh: character overlap of the jieba-joined normalised strings, spaces included."""
    pred, ref = words(normalize(prediction)), words(normalize(gold))
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def rouge(prediction: str, gold: str) -> tuple[float, float, float]:
    """(r1, r2, rL) F of rouge-chinese on raw texts; any failure or empty text is (0, 0, 0) upstream."""
    if not prediction or not gold:
        return 0.0, 0.0, 0.0
    try:
        scores = _libs()[1].get_scores(words(prediction), words(gold), avg=True)
    except Exception:  # upstream rouge_wrapper_zh returns zeros on any exception (e.g. no words)
        return 0.0, 0.0, 0.0
    return scores["rouge-1"]["f"], scores["rouge-2"]["f"], scores["rouge-l"]["f"]


def exact_match(prediction: str, golds: list[str]) -> float:
    """Averaged, not maxed, over the answer forms (upstream's EM)."""
    return sum(normalize(prediction) == normalize(g) for g in golds) / len(golds)


def mrr(retrieved: list[str], relevant: list[str]) -> float:
    for rank, doc_id in enumerate(retrieved, 1):
        if doc_id in relevant:
            return 1 / rank
    return 0.0


def average_precision(retrieved: list[str], relevant: list[str]) -> float:
    """upstream's MAP per query: divided by the relevant items found, not by those that exist."""
    hits, total = 0, 0.0
    for rank, doc_id in enumerate(retrieved, 1):
        if doc_id in relevant:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0


def nonnegative_mean(values: list[float]) -> float:
    """upstream judger: the mean of the values >= 0 (-1 = not applicable / unparsable); -1 if none."""
    kept = [v for v in values if v >= 0]
    return sum(kept) / len(kept) if kept else -1.0


class OmniEvalRule(Metric):
    """Rouge-1/2/L, F1 and EM against `gold["answers"]`."""

    name = "omnieval_rule"
    declares = MetricDeclaration(
        keys=("rouge_1", "rouge_2", "rouge_l", "f1", "em"),
        value_range=(0, 1),
        gold_needs=("answers",),
    )

    def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        golds = [str(g) for g in example.gold["answers"]]
        parts = [rouge(prediction.answer, g) for g in golds] or [(0.0, 0.0, 0.0)]
        return {
            "rouge_1": max(p[0] for p in parts),
            "rouge_2": max(p[1] for p in parts),
            "rouge_l": max(p[2] for p in parts),
            "f1": max((char_f1(prediction.answer, g) for g in golds), default=0.0),
            "em": exact_match(prediction.answer, golds) if golds else 0.0,
        }


def searched(prediction: Prediction) -> bool:
    """Whether the system ran a retrieval that answered: a traced retrieval step without an error, from a
    retriever other than `none` (`--retriever none` asks for no documents: closed book on purpose)."""
    return any(
        step.kind == "retrieval" and step.error is None and step.request.get("retriever") != "none"
        for step in prediction.trace
    )


class OmniEvalRetrieval(Metric):
    """MAP and MRR over the documents shown (k = how many), ids against `gold["relevant_node"]`.
    A prediction without documents that never searched (closed book) is not scorable (None), as upstream
    skips it, and so is a question whose relevant_node is absent (upstream fails on it). A search that
    found nothing and an empty relevant_node list score 0, as upstream's _MAP/_MRR do on an empty list
    (and count in the mean: leaving them out would raise the mean over the questions that found some)."""

    name = "omnieval_retrieval"
    declares = MetricDeclaration(
        keys=("map", "mrr"),
        value_range=(0, 1),
        gold_needs=("answers",),
    )

    def score(self, example: Example, prediction: Prediction, ctx: Any = None) -> Scores:
        relevant = example.gold.get("relevant_node")
        if relevant is None or not (prediction.docs or searched(prediction)):
            return {"map": None, "mrr": None}
        retrieved = [str(d.id) for d in prediction.docs]
        return {"map": average_precision(retrieved, relevant), "mrr": mrr(retrieved, relevant)}

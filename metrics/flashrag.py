"""FlashRAG's evaluator metrics (flashrag/evaluator/metrics.py) that `match.py` and `open_qa.py` do not
already compute: its token-level `precision` and `recall`, its `rouge-1`, `rouge-2` and `rouge-l`, and its
`retrieval_recall` and `retrieval_precision` of the documents shown.
(Its `em`, `acc` and `f1` are `em`, `cover_em` and `hotpot_f1`, with `regex=true` on CuratedTREC.)
Each scores the output against every gold answer and keeps the best, as upstream does; on a
multiple-choice set the gold answers are the texts of the right choices (FlashRAG's
`get_dataset_answer`). tests/tasks/flashrag/test_flashrag_metrics.py pins them to values from running upstream's file."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal

from ragbench.api import ConfigError, Example, Prediction, Scores, ScoringContext
from ragbench.api.data import JsonObject
from ragbench.api.retrieval import passage_text
from ragbench.api.text import normalize_answer

from .match import AnswerMetric, golds_of
from .open_qa import yes_no_mismatch

ROUGE_KEYS = {"rouge_1": "rouge-1", "rouge_2": "rouge-2", "rouge_l": "rouge-l"}  # ours -> the rouge package's


def token_precision_recall(prediction: str, gold: str) -> tuple[float, float]:
    """`F1_Score.token_level_scores` for one gold: the share of the output's normalised tokens in the gold,
    and of the gold's in the output; 0 on a yes/no/noanswer mismatch or no common token."""
    if yes_no_mismatch(prediction, gold):
        return 0.0, 0.0
    predicted, expected = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0, 0.0
    return common / len(predicted), common / len(expected)


class TokenPrecisionRecall(AnswerMetric):
    """FlashRAG's `precision` and `recall`: each the best over the gold answers on its own (the two may come
    from different golds, as upstream keeps a running max of each). No gold answers: not scorable."""

    name = "token_pr"
    declares = dataclasses.replace(
        AnswerMetric.declares,
        keys=("precision", "recall"),
    )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        golds = golds_of(example)
        if not golds:
            return dict.fromkeys(self.declares.keys)
        pairs = [token_precision_recall(prediction.answer, gold) for gold in golds]
        return {"precision": max(p for p, _ in pairs), "recall": max(r for _, r in pairs)}


def rouge_scorer(language: str) -> tuple[Any, Callable[[str], str]]:
    """The scorer FlashRAG uses and what it scores: the `rouge` package over the texts as written (`en`,
    `Rouge_Score`), or rouge-chinese over jieba's words joined by spaces (`zh`, `ZH_Rouge_Score`)."""
    try:
        if language == "zh":
            import jieba
            from rouge_chinese import Rouge

            jieba.setLogLevel(60)  # its dictionary-loading notes are not the run's
            return Rouge(), lambda text: " ".join(jieba.cut(text))
        from rouge import Rouge
    except ImportError as exc:
        raise ConfigError(
            f"FlashRAG's ROUGE needs {'jieba and rouge-chinese' if language == 'zh' else 'the rouge package'} "
            f"({exc}); run `pip install ragbench[flashrag]`"
        ) from exc
    return Rouge(), lambda text: text


def has_rouge_words(scorer: Any, text: str) -> bool:
    """Whether the scorer finds a sentence in the text (the rouge package splits on ".", rouge-chinese on
    its sentence ends; an empty text, or one of full stops only, has none)."""
    try:
        scorer.get_scores(text, text)
    except ValueError:
        return False
    return True


def rouge_f(scorer: Any, prediction: str, gold: str) -> dict[str, float] | None:
    """`scorer.get_scores(pred, answer)[0][key]["f"]` (rouge 1.0.1 and rouge-chinese 1.0.3: case-sensitive
    words, the F of 2PR/(P+R+1e-8)); None where the gold has no words. Either without words stops
    FlashRAG's evaluation (the scorer raises "Hypothesis is empty." or "Reference is empty."); here an
    output without words scores 0, as a wrong answer."""
    try:
        scores = scorer.get_scores(prediction, gold)[0]
    except ValueError as exc:  # the output is checked first: its message does not tell whether the gold has words
        return dict.fromkeys(ROUGE_KEYS, 0.0) if "Hypothesis" in str(exc) and has_rouge_words(scorer, gold) else None
    return {ours: scores[theirs]["f"] for ours, theirs in ROUGE_KEYS.items()}


class FlashRagRouge(AnswerMetric):
    """FlashRAG's `rouge-1`, `rouge-2` and `rouge-l` (`language=en`) or its `zh_rouge-1/2/l` (`language=zh`):
    each the best F over the gold answers. A gold without words stops FlashRAG's evaluation; here it is
    left out, and an example with no gold left is not scorable (never a 0 that is no answer's fault)."""

    name = "flashrag_rouge"
    declares = dataclasses.replace(
        AnswerMetric.declares,
        keys=tuple(ROUGE_KEYS),
    )

    def __init__(self, language: Literal["en", "zh"] = "en") -> None:
        if language not in ("en", "zh"):
            raise ConfigError(f"metric flashrag_rouge: language '{language}' is not en or zh")
        self.language = language

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        golds = golds_of(example)
        if not golds:
            return dict.fromkeys(self.declares.keys)
        scorer, cut = rouge_scorer(self.language)
        per_gold = [scores for gold in golds if (scores := rouge_f(scorer, cut(prediction.answer), cut(gold)))]
        if not per_gold:
            return dict.fromkeys(self.declares.keys)
        return {key: max(scores[key] for scores in per_gold) for key in self.declares.keys}

    def config(self) -> JsonObject:
        return {"name": self.name, "language": self.language}


class FlashRagRetrieval(AnswerMetric):
    """FlashRAG's `retrieval_recall` and `retrieval_precision` (`Retrieval_Recall`, `Retrieval_Precision`) of
    the first k documents shown (basic_config.yaml's `retrieval_recall_topk`, 5): each document read as
    FlashRAG's `contents` ("title\\ntext"), a hit where a normalised gold answer is a substring of it; recall 1
    when any is a hit, precision the share of hits. Fewer than k shown: those (upstream warns); none shown
    (a closed-book run): recall 0, as upstream, and precision not scorable (upstream divides by zero).
    No gold answers: not scorable."""

    name = "flashrag_retrieval"
    declares = dataclasses.replace(
        AnswerMetric.declares,
        keys=("retrieval_recall", "retrieval_precision"),
    )

    def __init__(self, k: int = 5) -> None:
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ConfigError(f"metric flashrag_retrieval: k must be a whole number of documents from 1, got {k!r}")
        self.k = k

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        golds = [normalize_answer(gold) for gold in golds_of(example)]
        if not golds:
            return dict.fromkeys(self.declares.keys)
        shown = prediction.shown_docs("FlashRAG's retrieval recall and precision")[: self.k]
        hits = [any(gold in normalize_answer(passage_text(doc)) for gold in golds) for doc in shown]
        return {"retrieval_recall": float(any(hits)), "retrieval_precision": sum(hits) / len(hits) if hits else None}

    def config(self) -> JsonObject:
        return {"name": self.name, "k": self.k}

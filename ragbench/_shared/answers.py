"""Answer normalisation and matching shared by metrics and systems (a system that checks whether its
documents hold the gold answers, as LLatrieval's "with gold" verifier does, matches as the metrics do), and the
items of an answer written as a list, one a line (`list_lines`)."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable
from typing import Any

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_LIST_MARKER = re.compile(r"^\s*(?:(?:Q(?:uestion)?\s*)?\d+\s*[.):]|[-*\u2022])\s+", re.IGNORECASE)
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str, articles: Any = _ARTICLES) -> str:
    """SQuAD normalisation: lowercase, drop punctuation, drop articles, collapse whitespace.

    `articles` is the compiled article pattern: `re`'s by default (SQuAD's script); OmniEval compiles
    the same pattern with the `regex` package, whose word boundaries differ beside combining marks,
    superscript digits and joiners ("a\u0300 la carte" keeps its "a" there)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(articles.sub(" ", text).split())


def token_f1(
    prediction: str, gold: str, normalize: Callable[[str], str] = normalize_answer, empty_agree: bool = False
) -> float:
    """SQuAD v1.1 token F1 of the normalised texts (Self-RAG `qa_f1_score`, KILT eval_downstream.py
    `_f1_score`): 0 when either side normalises to nothing. With `empty_agree`, SQuAD v2.0's
    `compute_f1` (MuSiQue's metrics/answer.py): 1 when both do."""
    predicted, expected = normalize(prediction).split(), normalize(gold).split()
    if empty_agree and not predicted and not expected:
        return 1.0
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def exact_presence(short_answers: list[str], context: str) -> bool:
    """ALCE eval.py: a normalised alias is a plain substring of the normalised text (no word
    boundaries; an alias that normalises to "" always matches)."""
    normalized = normalize_answer(context)
    return any(normalize_answer(answer) in normalized for answer in short_answers)


def list_lines(answer: str) -> list[str]:
    """The items of a list answer, one a line, in order, whitespace collapsed: list markers ("1.", "2)", "Q3:",
    "-", "*", "\u2022") taken off, and where any line carries one, a line without one (a preamble) left out."""
    lines = [line for line in answer.splitlines() if line.strip()]
    marked = [_LIST_MARKER.match(line) is not None for line in lines]
    kept = [line for line, has in zip(lines, marked) if has or not any(marked)]
    texts = (" ".join(_LIST_MARKER.sub("", line, count=1).split()) for line in kept)
    return [text for text in texts if text]

"""Fixed accuracies for the closed-set tasks, where upstream's substring `match` is unreliable
(a capital "C" anywhere matches gold "C"; "True" misses gold "true")."""

from __future__ import annotations

import re

from ragbench.api import Example, Metric, MetricDeclaration, Prediction, Score, ScoringContext
from ragbench.api.text import normalize_answer

_DIGIT_TO_LETTER = {"1": "A", "2": "B", "3": "C", "4": "D", "5": "E"}
_CITE = re.compile(r"\[Cite\].*", re.S)
_LETTER_PATTERNS = (
    re.compile(r"^\s*\(?([A-E])\)?(?:[\s.:)]|$)"),  # "B", "B: text", "(B)", "B."
    re.compile(r"\banswer(?: choice)?(?: is)?\s*:?\s*\(?([A-E])\b"),  # "the answer is C"
)


def answer_letter(output: str, labels: list[str], texts: list[str]) -> str | None:
    """The option letter an output picks: a leading letter, "answer is X", or an option's text."""
    output = _CITE.sub("", output).strip()
    for pattern in _LETTER_PATTERNS:
        found = pattern.search(output)
        if found:
            return found.group(1)
    normalized = normalize_answer(output)
    for label, text in zip(labels, texts):
        if normalized and normalized == normalize_answer(text):
            return _DIGIT_TO_LETTER.get(label, label)
    return None


class ChoiceAccuracy(Metric):
    name = "choice_accuracy"
    declares = MetricDeclaration(
        value_range=(0, 1),
        gold_needs=("choices",),
    )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Score:
        key = example.gold["answer_key"]
        choices = example.gold["choices"]
        picked = answer_letter(prediction.answer, choices["label"], choices["text"])
        return float(picked is not None and picked == _DIGIT_TO_LETTER.get(key, key))


_VERDICT = re.compile(r"\b(true|false|supports?|refutes?|correct|incorrect)\b", re.I)
_VERDICT_VALUE = {
    "true": "true",
    "supports": "true",
    "support": "true",
    "correct": "true",
    "false": "false",
    "refutes": "false",
    "refute": "false",
    "incorrect": "false",
}
_LABEL_VALUE = {"SUPPORTS": "true", "REFUTES": "false"}


def verdict(output: str) -> str | None:
    found = _VERDICT.search(output)
    return _VERDICT_VALUE[found.group(1).lower()] if found else None


class LabelAccuracy(Metric):
    """PubHealth: the first true/false verdict word of the output, in any case, against the gold."""

    name = "label_accuracy"
    declares = MetricDeclaration(
        value_range=(0, 1),
        gold_needs=("label",),
    )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Score:
        answers = example.gold.get("answers") or []
        gold = answers[0].lower() if answers else _LABEL_VALUE.get(example.gold.get("label", ""))
        return float(gold is not None and verdict(prediction.answer) == gold)

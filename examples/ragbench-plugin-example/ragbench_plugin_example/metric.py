"""`verdict_accuracy`: is the first true/false word of the answer the gold truth value?"""
from __future__ import annotations

import re

from ragbench.metric import Metric, Score
from ragbench.types import Example, Prediction

_VERDICT = re.compile(r"\b(true|false)\b", re.I)


def parse_verdict(text: str) -> bool | None:
    """True/False from the first "true" or "false" word (any case), None if there is none."""
    found = _VERDICT.search(text)
    return None if found is None else found.group(1).lower() == "true"


class VerdictAccuracy(Metric):
    """1.0 when the parsed verdict equals gold["truth"]; an answer with no verdict scores 0.0.
    An example without a boolean gold truth is not scorable (None)."""

    name = "verdict_accuracy"

    def score(self, example: Example, prediction: Prediction, ctx=None) -> Score:
        truth = example.gold.get("truth")
        if not isinstance(truth, bool):
            return None
        return float(parse_verdict(prediction.answer) == truth)

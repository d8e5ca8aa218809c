"""`verdict_accuracy`: is the first true/false word of the answer the gold truth value?"""

from __future__ import annotations

import re

from ragbench.api import ConfigError, Example, Metric, MetricDeclaration, Prediction, Score

_VERDICT = re.compile(r"\b(true|false)\b", re.I)


def parse_verdict(text: str) -> bool | None:
    """True/False from the first "true" or "false" word (any case), None if there is none."""
    found = _VERDICT.search(text)
    return None if found is None else found.group(1).lower() == "true"


class VerdictAccuracy(Metric):
    """1.0 when the parsed verdict equals the gold truth: gold["truth"] (this plugin's task) or a
    true/false verdict label (ragbench's pubhealth: SUPPORTS / REFUTES); an answer with no verdict scores
    0.0. An example without such gold is not scorable (None)."""

    name = "verdict_accuracy"
    declares = MetricDeclaration(gold_needs=("label",), value_range=(0, 1))  # fits tasks with a verdict label

    def score(self, example: Example, prediction: Prediction, ctx=None) -> Score:
        truth = example.gold.get("truth")
        if not isinstance(truth, bool):
            truth = {"SUPPORTS": True, "REFUTES": False}.get(str(example.gold.get("label", "")).upper())
        if truth is None:
            return None
        return float(parse_verdict(prediction.answer) == truth)


def mentions_family(name: str) -> type[Metric]:
    """The `mentions:` metric family (plugin.py's `ragbench_metric_families`): `mentions:WORD` is 1.0
    when the answer contains WORD as a word, any case."""
    word = name.partition(":")[2]
    if not word:
        raise ConfigError("--metrics mentions:WORD: give the word, e.g. mentions:true")
    pattern = re.compile(rf"\b{re.escape(word)}\b", re.I)

    class Mentions(Metric):
        def score(self, example: Example, prediction: Prediction, ctx=None) -> Score:
            return float(bool(pattern.search(prediction.answer)))

    Mentions.name = name
    return Mentions

"""RGB's scoring (chen700564/RGB evalue.py `predict`, `checkanswer` and the rates of its main), per example,
reproduced exactly; tests/tasks/rgb/test_rgb.py pins them to values from running evalue.py's functions.

Every example is labelled as `predict` labels it: on the Chinese sets the spaces are taken out of the
output first; an output holding "insufficient information" or "信息不足" (as written: not lower-cased) is a
rejection, label [-1]; any other gets `checkanswer`'s one label per answer item: 1 where the lower-cased
output contains the item (a list of aliases: any one of them), else 0. A fact label is 1 where the output
holds "factual errors" or "事实性错误".

- `rgb`: `accuracy` (no item label 0 and at least one 1: every item found), `rejected` (a rejection) and
  `all_rate`, the figure evalue.py prints: accuracy where the passages hold answers, and at noise_rate 1
  (no passage holds one) a rejection or a found answer: the rejection rate of the paper's negative
  rejection.
- `rgb_fact`: `error_detection` (ED: the fact label) and `error_correction` (CR: among the outputs that
  detect the error, those with no item label 0; a rejection counts, as upstream's `0 not in label` says);
  an output that detects no error is not scorable for CR, so a task where none does reports no CR (n 0),
  where evalue.py prints 0.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ragbench.api import Example, KeySpec, Metric, MetricDeclaration, Prediction, Scores, ScoringContext
from ragbench.api.data import JsonObject

REJECTIONS = ("信息不足", "insufficient information")
FACT_CHECKS = ("事实性错误", "factual errors")
ANSWER = "rgb_answer"  # the example's gold: RGB's `answer` as the file gives it
NOISE_RATE = "noise_rate"  # the example's meta: the task's noise_rate, as evalue.py records it per output


def check_answer(prediction: str, ground_truth: Any) -> list[int]:
    """evalue.py `checkanswer`: one label per answer item, 1 where the lower-cased prediction contains it
    (a list item: any of its aliases)."""
    prediction = prediction.lower()
    items = ground_truth if isinstance(ground_truth, list) else [ground_truth]
    labels = []
    for item in items:
        aliases = item if isinstance(item, list) else [item]
        labels.append(int(any(alias.lower() in prediction for alias in aliases)))
    return labels


def labels_of(output: str, ground_truth: Any, strip_spaces: bool) -> tuple[list[int], int]:
    """evalue.py `predict`'s (labels, factlabel) of one output."""
    if strip_spaces:
        output = output.replace(" ", "")
    labels = [-1] if any(marker in output for marker in REJECTIONS) else check_answer(output, ground_truth)
    return labels, int(any(marker in output for marker in FACT_CHECKS))


def answered(labels: list[int]) -> bool:
    return 0 not in labels and 1 in labels


class RgbMetric(Metric):
    """Shared by both: the output labelled as `predict` does (`strip_spaces`: the Chinese sets)."""

    declares = MetricDeclaration(
        gold_needs=(ANSWER,),
        value_range=(0, 1),
    )

    def __init__(self, strip_spaces: bool = False) -> None:
        self.strip_spaces = strip_spaces

    def labels(self, example: Example, prediction: Prediction) -> tuple[list[int], int]:
        return labels_of(prediction.answer, example.gold[ANSWER], self.strip_spaces)

    def config(self) -> JsonObject:
        return {"name": self.name, "strip_spaces": self.strip_spaces}


class RgbAccuracy(RgbMetric):
    name = "rgb"
    declares = dataclasses.replace(
        RgbMetric.declares,
        keys=("accuracy", "rejected", "all_rate"),
        # a rejection is right where no passage holds the answer (noise_rate 1) and wrong elsewhere
        key_specs={"rejected": KeySpec(None, (0, 1))},
    )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        labels, _ = self.labels(example, prediction)
        rejected = labels[0] == -1 if labels else False
        counted = (example.meta.get(NOISE_RATE) == 1 and rejected) or answered(labels)
        return {"accuracy": float(answered(labels)), "rejected": float(rejected), "all_rate": float(counted)}


class RgbCounterfactual(RgbMetric):
    name = "rgb_fact"
    declares = dataclasses.replace(
        RgbMetric.declares,
        keys=("error_detection", "error_correction"),
    )

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Scores:
        labels, fact_label = self.labels(example, prediction)
        corrected = float(0 not in labels) if fact_label else None
        return {"error_detection": float(fact_label), "error_correction": corrected}

"""How well a judge agrees with human labels on the examples both scored: accuracy (the share of examples where
the judge's value is the human's), Cohen's kappa (that agreement beyond what the two value frequencies give by
chance) and the confusion table (rows: the human's value, columns: the judge's). Values are compared as
categories (a label set's values, CRAG's -1/0/1); keys with more distinct values than `MAX_CATEGORIES`
(a judge's continuous score) get no agreement figures, only the PPI interval (ragbench._statistics.ppi)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .rater_agreement import cohen_kappa

MAX_CATEGORIES = 10


@dataclass(frozen=True)
class Agreement:
    accuracy: float
    kappa: float | None  # None: chance agreement is certain (both gave one value throughout)
    labels: list[float]  # the confusion table's row and column values, ascending
    confusion: list[list[int]]  # confusion[i][j]: examples the human gave labels[i] and the judge labels[j]


def category(value: float) -> float:
    """A value as a category: rounded so that 0.1 + 0.2 and 0.3 are one value."""
    return round(float(value), 9)


def agreement(human: Sequence[float], judge: Sequence[float]) -> Agreement | None:
    """Accuracy, kappa and the confusion table of the judge against the humans; None where the values are too
    many to be categories."""
    pairs = [(category(h), category(j)) for h, j in zip(human, judge, strict=True)]
    labels = sorted({value for pair in pairs for value in pair})
    if not pairs or len(labels) > MAX_CATEGORIES:
        return None
    position = {value: i for i, value in enumerate(labels)}
    confusion = [[0] * len(labels) for _ in labels]
    for h, j in pairs:
        confusion[position[h]][position[j]] += 1
    accuracy = sum(h == j for h, j in pairs) / len(pairs)
    kappa = cohen_kappa([h for h, _ in pairs], [j for _, j in pairs])
    return Agreement(accuracy, kappa, labels, confusion)

"""The typed shape of results.json's `human_agreement` (ragbench._reports.judging.human_agreement): per judged key,
the judge's figures against human labels (`KeyCheck`), whole and per slice (`Check`). Each is a `TypedDict`: a dict at
run time, as the file reads."""

from __future__ import annotations

from typing import TypedDict


class Interval(TypedDict):
    """A mean and its 95% interval."""

    value: float
    ci95: list[float]


class CountedInterval(Interval):
    """A mean, its 95% interval and the examples it is over."""

    n: int


class PpiInterval(Interval):
    """The prediction-powered estimate: its interval, the weight it gave the judge and the labels it is worth."""

    power: float
    effective_n: float | None
    gained: float | None


class _Check(TypedDict):
    n_labelled: int
    n_unlabelled: int


class Check(_Check, total=False):
    """The figures of one set of judged examples (`check`): its labels; the judge's mean; where labelled, the
    judge's agreement with the humans (accuracy, kappa, the confusion table), the humans' mean and the PPI
    estimate (null: no unlabelled example, `ppi_note` says so)."""

    judge_only: CountedInterval
    accuracy: float
    kappa: float | None
    labels: list[float]
    confusion: list[list[int]]
    human_only: Interval
    ppi: PpiInterval | None
    ppi_note: str


class KeyCheck(Check, total=False):
    """A judged key's entry of results.json `human_agreement`: where its labels come from, those of examples the
    judge did not score and those of examples not in the task, and the same figures per slice."""

    source: str
    labels_unjudged: int
    labels_unknown: int
    slices: dict[str, dict[str, Check]]

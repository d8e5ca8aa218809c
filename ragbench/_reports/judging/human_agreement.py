"""results.json's `human_agreement`: each judged key that has human labels, checked against them per task and
slice - the judge's accuracy, Cohen's kappa and confusion table (ragbench._statistics.label_agreement) on the
examples both scored, the humans' own mean, the judge-only mean, and the prediction-powered estimate of the
mean human label with its interval and the effective number of labels it is worth (ragbench._statistics.ppi).

Human labels come from a labels file (`--human-labels FILE`, ragbench._reports.judging.human_labels) or from a metric of
the task that reads labels shipped with the predictions and declares which judged key each checks
(`declares.human_labels_for`: CRAG's crag_human). The labelled examples are those with a judge value and a label;
the unlabelled ones (PPI's N) those with a judge value and no label. A label whose example the judge did not
score (`labels_unjudged`), or that names no example of the task (`labels_unknown`), is counted, not used.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

from ..._metric import Metric, reported_keys
from ..._records import SampleRecord
from ..._statistics.label_agreement import agreement
from ..._statistics.ppi import MeanInterval, classical_mean, ppi_mean
from ..results.judging_schema import Check, Interval, KeyCheck, PpiInterval
from ..results.schema import Cell, KeyDetails, PpiCell, TaskSections
from ..results.slice_labels import SliceLabels, SliceValue, ordered, slice_value
from .human_labels import HumanLabels

log = logging.getLogger(__name__)

CONFIDENCE = 0.95
NO_UNLABELLED = "every judged example has a human label: the humans' own mean is the estimate"


def judged_keys(metrics: list[Metric]) -> list[str]:
    """The reported keys of the metrics that ask an LLM judge."""
    return [key for metric in metrics if "judge" in metric.declares.needs for key in reported_keys(metric)]


def metric_label_keys(metrics: list[Metric]) -> dict[str, str]:
    """Judged key -> the key of a metric that holds the human label for it (`MetricDeclaration.human_labels_for`)."""
    return {
        judged: metric.key_prefix + own
        for metric in metrics
        for own, judged in metric.declares.human_labels_for.items()
    }


@dataclass
class _Pairs:
    """A key's judge values, with the human label where there is one, and each example's slice labels."""

    source: str
    judge: list[float] = field(default_factory=list)
    human: list[float | None] = field(default_factory=list)
    slices: list[dict[str, SliceValue]] = field(default_factory=list)
    unjudged: int = 0  # labels of examples the judge did not score


def _interval(estimate: MeanInterval) -> Interval:
    return {"value": estimate.value, "ci95": [estimate.low, estimate.high]}


def check(judge: list[float], human: list[float | None]) -> Check:
    """The figures of one set of examples: `judge` values, `human` labels (None: unlabelled)."""
    labelled = [(j, h) for j, h in zip(judge, human) if h is not None]
    unlabelled = [j for j, h in zip(judge, human) if h is None]
    out: Check = {"n_labelled": len(labelled), "n_unlabelled": len(unlabelled)}
    if judge:
        out["judge_only"] = {**_interval(classical_mean(judge, CONFIDENCE)), "n": len(judge)}
    if not labelled:
        return out
    humans, judged = [h for _, h in labelled], [j for j, _ in labelled]
    found = agreement(humans, judged)
    if found is not None:
        out.update(
            {"accuracy": found.accuracy, "kappa": found.kappa, "labels": found.labels, "confusion": found.confusion}
        )
    out["human_only"] = _interval(classical_mean(humans, CONFIDENCE))
    if not unlabelled:
        out["ppi"] = None
        out["ppi_note"] = NO_UNLABELLED
        return out
    estimate = ppi_mean(humans, judged, unlabelled, CONFIDENCE)
    out["ppi"] = {
        **_interval(estimate),
        "power": estimate.power,
        "effective_n": estimate.effective_n,
        "gained": None if estimate.effective_n is None else estimate.effective_n - len(labelled),
    }
    return out


class JudgeCheckTally:
    """A task's `human_agreement`, filled sample by sample."""

    def __init__(
        self, task: str, metrics: list[Metric], slice_fields: tuple[str, ...], labels: HumanLabels | None
    ) -> None:
        self.slice_fields = slice_fields
        self.file_labels = labels.for_task(task) if labels is not None else {}
        self.label_keys = metric_label_keys(metrics)
        self.pairs: dict[str, _Pairs] = {}
        judged = judged_keys(metrics)
        for key in judged:
            if key in self.file_labels:
                self.pairs[key] = _Pairs(f"file {labels.path}" if labels is not None else "")
            elif key in self.label_keys:
                self.pairs[key] = _Pairs(f"key {self.label_keys[key]}")
        for key in sorted(set(self.file_labels) - set(judged)):
            log.warning(
                "--human-labels %s: %s is no judged key of task %s (%s); its %d labels are not used",
                labels.path if labels is not None else "",
                key,
                task,
                ", ".join(judged) or "it has no judged metric",
                len(self.file_labels[key]),
            )
        self.seen: set[str] = set()  # the ids of the task's records, failed ones too

    def add(self, record: SampleRecord) -> None:
        if not self.pairs:
            return
        self.seen.add(str(record.id))
        failed = record.error is not None or record.bad_record
        slices = {name: slice_value(record.meta, name) for name in self.slice_fields}
        for key, pairs in self.pairs.items():
            human = self._label(key, record)
            value = None if failed else record.scores.get(key)
            if value is None:
                pairs.unjudged += human is not None
                continue
            pairs.judge.append(float(value))
            pairs.human.append(human)
            pairs.slices.append(slices)

    def _label(self, key: str, record: SampleRecord) -> float | None:
        if key in self.file_labels:
            return self.file_labels[key].get(str(record.id))
        value = record.scores.get(self.label_keys[key])
        return None if value is None else float(value)

    def sections(self) -> TaskSections:
        """{"human_agreement": {key: figures}} of the keys with a label; nothing where none has one."""
        out: dict[str, KeyCheck] = {}
        for key, pairs in self.pairs.items():
            if not any(h is not None for h in pairs.human) and not pairs.unjudged:
                continue
            entry = cast(KeyCheck, {"source": pairs.source, **check(pairs.judge, pairs.human)})  # source first
            entry["labels_unjudged"] = pairs.unjudged
            if key in self.file_labels:
                entry["labels_unknown"] = len(set(self.file_labels[key]) - self.seen)
            entry["slices"] = self._slices(pairs)
            out[key] = entry
        return {"human_agreement": out} if out else {}

    def _slices(self, pairs: _Pairs) -> dict[str, dict[str, Check]]:
        """Per slice field, per label (as `details` labels the field's values), the figures of its examples."""
        out: dict[str, dict[str, Check]] = {}
        for name in self.slice_fields:
            labels = SliceLabels(values[name] for values in pairs.slices)
            groups: dict[str, tuple[list[float], list[float | None]]] = {}
            for judge, human, values in zip(pairs.judge, pairs.human, pairs.slices):
                group = groups.setdefault(labels.label(values[name]), ([], []))
                group[0].append(judge)
                group[1].append(human)
            out[name] = {label: check(*groups[label]) for label in ordered(groups)}
        return out


def _ppi_cell(entry: Check, ppi: PpiInterval) -> PpiCell:
    return {
        "value": ppi["value"],
        "ci95": ppi["ci95"],
        "n_labelled": entry["n_labelled"],
        "n_unlabelled": entry["n_unlabelled"],
        "effective_n": ppi["effective_n"],
    }


def add_ppi(details: Mapping[str, KeyDetails], checked: Mapping[str, KeyCheck]) -> None:
    """Each judged key's PPI estimate (from a task's `human_agreement`, `checked`) beside its value in `details`,
    and each slice's beside the slice's value."""
    for key, entry in checked.items():
        if ppi := entry.get("ppi"):
            details[key]["ppi"] = _ppi_cell(entry, ppi)
        for field_name, cells in (entry.get("slices") or {}).items():
            for label, cell in cells.items():
                shown: Cell | None = ((details[key].get("slices") or {}).get(field_name) or {}).get(label)
                if (slice_ppi := cell.get("ppi")) and shown is not None:
                    shown["ppi"] = _ppi_cell(cell, slice_ppi)

"""A task's per-example scores as compact columns, filled one sample at a time, and their summaries (value,
bootstrap interval, n, per slice).

A run's end must not hold its samples: each key keeps the values it scored (float64) and the places of their
samples (uint32), each slice field a small-int code of every sample's value (uint32), the distinct values
once. That is 12 bytes a scored example a key and 4 a sample a field, where a record of Python objects took
kilobytes; the values, their order and so every number are those of the samples themselves.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable
from functools import lru_cache
from typing import TypedDict, cast

import numpy as np

from ..._metric import InvalidScore, Metric, finite_number, key_spec, reported_keys, saved_value
from ..._plugin_calls import PluginCall
from ..._records import SampleRecord
from ..._statistics.bootstrap import mean, percentile_interval, resampled
from .failures import AggregateFailure
from .schema import Cell, KeyDetails
from .slice_labels import SliceLabels, SliceValue, ordered, slice_value

Aggregate = Callable[[list[float]], float]


class _Direction(TypedDict):
    higher_is_better: bool | None


class Direction(_Direction, total=False):
    """What results.json says of a key whatever its values: its direction, and its range where declared."""

    range: list[float | None]


class AggregateError(ValueError):
    """A value of a key that is not a finite number (an aggregate's, a mean's or an interval's)."""


def bootstrap_interval(
    values: list[float], aggregate: Aggregate | None, iterations: int, seed: int
) -> list[float] | None:
    """Percentile 95% interval of the aggregate over examples resampled with replacement."""
    if len(values) < 2 or iterations <= 0:
        return None
    return list(percentile_interval(resampled(values, iterations, seed, aggregate)))


def summarise(values: list[float], aggregate: Aggregate | None, iterations: int, seed: int) -> Cell:
    """value, ci95 and n of a key's values. Raises what `aggregate` raises (`InvalidScore` for a value that
    is no finite number: `checked_aggregate`), and `AggregateError` where the mean or an end of the
    interval is not a finite number. The mean's summary of a few values (`FEW_VALUES`) is worked out once a
    process for the same values, bit for bit, rounds and seed (`_mean_summary`)."""
    if not values:
        return {"value": None, "ci95": None, "n": 0}
    if aggregate is None and len(values) <= FEW_VALUES:
        value, ends = _mean_summary(array("d", values).tobytes(), iterations, seed)
        return {"value": value, "ci95": None if ends is None else list(ends), "n": len(values)}
    value, interval = _summary(values, aggregate, iterations, seed)
    return {"value": value, "ci95": interval, "n": len(values)}


FEW_VALUES = 64  # values whose mean's summary is kept (`_mean_summary`): a slice's, a small task's


@lru_cache(maxsize=1024)
def _mean_summary(values: bytes, iterations: int, seed: int) -> tuple[float, tuple[float, ...] | None]:
    """`_summary` of the mean of `values` (float64s, bit for bit: 0.0 and -0.0 are not the same values), kept:
    a task's keys and slices, and a process's runs (a notebook's loop, a test suite's small runs), summarise
    the same few values again and again, each time paying numpy's fixed cost of a bootstrap (a draw generator
    made, a percentile taken). What raises (values that overflow) is not kept."""
    value, interval = _summary(array("d", values).tolist(), None, iterations, seed)
    return value, None if interval is None else tuple(interval)


def _summary(
    values: list[float], aggregate: Aggregate | None, iterations: int, seed: int
) -> tuple[float, list[float] | None]:
    """(value, ci95) of `summarise`, worked out."""
    value = mean(values) if aggregate is None else aggregate(values)
    if not math.isfinite(value):
        raise AggregateError(f"the mean of {len(values)} values is {value} (they overflow)")
    interval = bootstrap_interval(values, aggregate, iterations, seed)
    if interval is not None and not all(math.isfinite(end) for end in interval):
        raise AggregateError(f"the 95% interval of {len(values)} values is {interval} (they overflow)")
    return value, interval


def summarised(
    values: list[float],
    aggregate: Aggregate | None,
    iterations: int,
    seed: int,
    metric: str,
    key: str,
    failed: list[AggregateFailure],
) -> Cell:
    """`summarise`, or where it fails an entry without value or interval that says why ("error"), the
    failure added to `failed` with its traceback."""
    with PluginCall() as call:
        return summarise(values, aggregate, iterations, seed)
    trace = None if isinstance(call.raised, (AggregateError, InvalidScore)) else call.traceback  # ours: no use
    failed.append(AggregateFailure(metric, key, call.error or "", trace))
    return {"value": None, "ci95": None, "n": len(values), "error": cast(str, call.error)}  # it failed: said why


def checked_aggregate(metric: Metric, key: str) -> Aggregate | None:
    """The metric's `aggregate` of one of its keys, raising `InvalidScore` for a value that is not a
    finite number (`finite_number`: None, a string, NaN, an infinity); None where the metric keeps the mean."""
    if type(metric).aggregate is Metric.aggregate:
        return None

    def aggregate(values: list[float]) -> float:
        return finite_number(f"metric {metric.name}'s aggregate", key, metric.aggregate(key, values))

    return aggregate


def key_entry(metric: Metric, key: str) -> Direction:
    """What results.json says of a key's values: its direction, and its range where declared."""
    spec = key_spec(metric, key)
    direction: Direction = {"higher_is_better": spec.higher_is_better}
    if spec.range:
        direction["range"] = list(spec.range)
    return direction


class KeyColumn:
    """One per-example key's scored values in sample order, the places of their samples, and its counts."""

    def __init__(self, metric: Metric, reported: str, key: str) -> None:
        self.metric, self.reported, self.key = metric, reported, key
        self.values, self.places = array("d"), array("I")
        self.n_none = self.n_errors = 0

    def add(self, sample: SampleRecord, place: int) -> None:
        """A sample's value: an error where the example or the metric failed on it, where it has no value for
        the key (a sample of an older version of the metric: a failure, never a smaller n) or where its value
        is not a score."""
        scores = sample.scores
        if sample.error is not None or self.metric.name in sample.score_errors or self.reported not in scores:
            self.n_errors += 1
            return
        value, typed = saved_value(self.metric, self.key, scores[self.reported])
        self.n_errors += not typed
        self.n_none += typed and value is None
        if value is not None:
            self.values.append(value)
            self.places.append(place)


class SliceColumn:
    """One slice field: the code of every sample's value (`slice_value`), each distinct value once, and the
    codes of the values samples that are no bad record hold (those every table lists)."""

    def __init__(self, field: str) -> None:
        self.field = field
        self.codes = array("I")
        self.distinct: dict[SliceValue, int] = {}
        self.listed: set[int] = set()

    def add(self, sample: SampleRecord) -> None:
        code = self.distinct.setdefault(slice_value(sample.meta, self.field), len(self.distinct))
        self.codes.append(code)
        if not sample.bad_record:
            self.listed.add(code)

    def labelled(self) -> tuple[SliceLabels, list[str]]:
        """(the field's labels, the label of each code)."""
        values = list(self.distinct)
        labels = SliceLabels(values[code] for code in self.listed)
        return labels, [labels.label(value) for value in values]


class ScoreColumns:
    """The per-example keys of a task's metrics and its slice fields, as columns filled sample by sample
    (in data order: the bootstrap resamples them in that order)."""

    def __init__(self, metrics: list[Metric], slice_fields: tuple[str, ...]) -> None:
        self.keys = [
            KeyColumn(metric, reported, key) for metric in metrics for reported, key in reported_keys(metric).items()
        ]
        self.slices = [SliceColumn(field) for field in slice_fields]
        self.samples = 0

    def add(self, sample: SampleRecord) -> None:
        for column in self.slices:
            column.add(sample)
        for key in self.keys:
            key.add(sample, self.samples)
        self.samples += 1

    def entries(self, iterations: int, seed: int, failed: list[AggregateFailure]) -> dict[str, KeyDetails]:
        """Per key: value, ci95, n, n_none, n_errors, its direction and range (`key_entry`), and the same per
        label of each slice field; a value that cannot be computed (`summarised`) is added to `failed`."""
        labelled = [(column, *column.labelled()) for column in self.slices]
        out: dict[str, KeyDetails] = {}
        for key in self.keys:
            aggregate = checked_aggregate(key.metric, key.key)
            cell = summarised(key.values.tolist(), aggregate, iterations, seed, key.metric.name, key.reported, failed)
            entry = cast(  # the cell's keys, then the counts and direction: written in this order
                KeyDetails, {**cell, "n_none": key.n_none, "n_errors": key.n_errors, **key_entry(key.metric, key.key)}
            )
            slices = {
                column.field: self._slices(key, column, labels, code_labels, aggregate, iterations, seed, failed)
                for column, labels, code_labels in labelled
            }
            if slices:
                entry["slices"] = slices
            out[key.reported] = entry
        return out

    @staticmethod
    def _slices(
        key: KeyColumn,
        column: SliceColumn,
        labels: SliceLabels,
        code_labels: list[str],
        aggregate: Aggregate | None,
        iterations: int,
        seed: int,
        failed: list[AggregateFailure],
    ) -> dict[str, Cell]:
        """Per label of the field (`slice_labels`), the summary of the key's values scored there, in sample
        order. Every value the field takes among the task's samples (bad records have none) has its label,
        with n 0 where the key scored none there, so no slice drops out of a table."""
        listed = set(labels.labels())
        names = ordered(listed | set(code_labels))
        number = {name: i for i, name in enumerate(names)}
        value_labels = np.array([number[name] for name in code_labels], dtype=np.int64)[
            np.frombuffer(column.codes, dtype=np.uint32)[np.frombuffer(key.places, dtype=np.uint32)]
        ]
        order = np.argsort(value_labels, kind="stable")  # grouped by label, each group in sample order
        values = np.frombuffer(key.values, dtype=np.float64)[order]
        ends = np.searchsorted(value_labels[order], np.arange(len(names) + 1))
        return {
            name: summarised(
                values[ends[i] : ends[i + 1]].tolist(),
                aggregate,
                iterations,
                seed,
                key.metric.name,
                f"{key.reported} by {column.field}={name}",
                failed,
            )
            for i, name in enumerate(names)
            if name in listed or ends[i + 1] > ends[i]
        }

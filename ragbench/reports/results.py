"""Aggregating sample records into per-task metric values, bootstrap intervals and slices."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..metric import Metric
from .bootstrap import percentile_interval, resampled

Aggregate = Callable[[list[float]], float]


def bootstrap_interval(values: list[float], aggregate: Aggregate | None, iterations: int,
                       seed: int) -> list[float] | None:
    """Percentile 95% interval of the aggregate over examples resampled with replacement."""
    if len(values) < 2 or iterations <= 0:
        return None
    return list(percentile_interval(resampled(values, iterations, seed, aggregate)))


def summarise(values: list[float], aggregate: Aggregate | None, iterations: int, seed: int) -> dict[str, Any]:
    if not values:
        return {"value": None, "ci95": None, "n": 0}
    value = float(np.mean(values)) if aggregate is None else float(aggregate(values))
    return {"value": value, "ci95": bootstrap_interval(values, aggregate, iterations, seed), "n": len(values)}


def aggregation_view(sample: dict[str, Any]) -> dict[str, Any]:
    """What aggregation keeps of a sample record: all of it but the copies of prompts, replies and
    documents (trace steps keep their kind, name, token counts and request options; the prediction
    its answer, citations and extras), so a task's results never hold its samples' text."""
    view = {k: v for k, v in sample.items() if k not in ("trace", "judge_trace", "output")}
    if "trace" in sample:
        view["trace"] = [{**{k: v for k, v in step.items() if k != "docs"}, "response": None,  # docs: a custom step's
                          "request": {k: v for k, v in (step.get("request") or {}).items()
                                      if k not in ("prompt", "messages")}} for step in sample["trace"]]
    if "prediction" in sample:
        view["prediction"] = {k: v for k, v in sample["prediction"].items() if k not in ("docs", "raw_output")}
    return view


def aggregate_task(samples: list[dict[str, Any]], metrics: list[Metric], slice_fields: tuple[str, ...],
                   iterations: int = 1000, seed: int = 0) -> dict[str, dict[str, Any]]:
    """Per metric key: value, ci95, n, n_none (not scorable), n_errors (example or metric failed),
    and the same per slice value of each slice field."""
    owners = {key: metric for metric in metrics for key in metric.score_keys()}
    out: dict[str, dict[str, Any]] = {}
    for key, metric in owners.items():
        aggregate = None if type(metric).aggregate is Metric.aggregate else (
            lambda vals, key=key, metric=metric: metric.aggregate(key, vals))
        scored = [s for s in samples if s.get("error") is None and key in s.get("scores", {})]
        values = [s["scores"][key] for s in scored if s["scores"][key] is not None]
        entry = summarise(values, aggregate, iterations, seed)
        entry["n_none"] = sum(1 for s in scored if s["scores"][key] is None)
        entry["n_errors"] = sum(1 for s in samples if s.get("error") is not None  # score_errors: by metric name
                                or metric.name in (s.get("score_errors") or {}))
        entry["higher_is_better"] = metric.higher_is_better
        slices: dict[str, dict[str, Any]] = {}
        for field in slice_fields:
            groups: dict[str, list[float]] = {}
            for sample in scored:
                value = sample["scores"][key]
                if value is not None:
                    label = str((sample.get("meta") or {}).get(field, "(missing)"))
                    groups.setdefault(label, []).append(value)
            slices[field] = {label: summarise(vals, aggregate, iterations, seed)
                             for label, vals in sorted(groups.items())}
        if slices:
            entry["slices"] = slices
        out[key] = entry
    for metric in metrics:
        if metric.corpus_keys:
            out.update(corpus_entries(metric, samples, seed))
    return out


def corpus_entries(metric: Metric, samples: list[dict[str, Any]], seed: int) -> dict[str, dict[str, Any]]:
    """A corpus-level metric's values over the scored samples; a failure is recorded in each
    of its entries ("error"), not raised."""
    scored = [s for s in samples if s.get("error") is None and "scores" in s]
    errors = sum(1 for s in samples if s.get("error") is not None)
    try:
        values = metric.corpus(scored, seed)
        error = None
    except Exception as exc:
        values, error = {}, f"{type(exc).__name__}: {exc}"
    out = {}
    for key in metric.corpus_keys:
        entry = {"value": values.get(key), "ci95": None, "n": len(scored), "n_none": 0, "n_errors": errors,
                 "higher_is_better": metric.higher_is_better, "corpus": True}
        if error is not None:
            entry["error"] = error
        out[key] = entry
    return out

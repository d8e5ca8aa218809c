"""RACE's arithmetic as DeepResearch Bench's scripts do it (214741e): the criteria shown to the judge
(deepresearch_bench_race.format_criteria_list), the judge's per-criterion scores weighted into each article's
dimension averages and total (utils/score_calculator.calculate_weighted_scores), and the target's share of each
(process_single_item).

Kept as released: a criterion the judge names is matched to the task's exactly, else ignoring case, else where
either name holds the other, else it takes the dimension's mean weight; a score given as `target_score` stands for
article 1's; an item whose scores are no numbers is skipped. A dimension's reference average is 0 unless the last
article-2 score read (in this dimension or an earlier one: the script's variable outlives its loop) is present.
Dimensions the judge gives beyond the four count in the totals where the task weighs them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .reply_json import DIMENSIONS


class CriteriaError(ValueError):
    """The task's criteria cannot weigh the judge's scores (the script's item fails)."""


def criteria_list(criteria: Mapping[str, Any]) -> str:
    """The `{criteria_list}` of the scoring prompt: each dimension's criteria and explanations, no weights."""
    shown: dict[str, list[dict[str, Any]]] = {}
    for dim, items in dict(criteria.get("criterions", {})).items():
        if not isinstance(items, list):
            continue
        shown[dim] = [
            {"criterion": item["criterion"], "explanation": item["explanation"]}
            for item in items
            if isinstance(item, Mapping) and "criterion" in item and "explanation" in item
        ]
    return json.dumps(shown, ensure_ascii=False, indent=2)


def _weight_of(name: str, weights: dict[str, Any]) -> Any:
    if name in weights:
        return weights[name]
    lower = name.lower()
    for key, weight in weights.items():
        if key.lower() == lower:
            return weight
    for key, weight in weights.items():
        if lower in key.lower() or key.lower() in lower:
            return weight
    return sum(weights.values()) / len(weights)


def weighted(judged: Mapping[str, Any], criteria: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """{"target"|"reference": {"dims": {dim: average}, "total": weighted sum}} of the judge's scores."""
    if not criteria.get("criterions"):
        raise CriteriaError("the task's criteria have no criterions")
    dimension_weights = criteria.get("dimension_weight", {})
    weights = {
        dim: {item["criterion"]: item["weight"] for item in items} for dim, items in criteria["criterions"].items()
    }
    out: dict[str, dict[str, Any]] = {side: {"dims": {}, "total": 0.0} for side in ("target", "reference")}
    second: float | None = None  # the last article-2 score read, kept across items and dimensions
    for dim, items in judged.items():
        if not isinstance(items, list) or dim not in dimension_weights or not weights.get(dim):
            continue
        sums, total_weight = [0.0, 0.0], 0.0
        for item in items:
            if not isinstance(item, dict):
                continue
            name = item.get("criterion")
            name = name.strip() if isinstance(name, str) else None
            raw_first = item.get("article_1_score")
            if item.get("target_score") is not None and raw_first is None:
                raw_first = item["target_score"]
            raw_second = item.get("article_2_score")
            try:
                first = float(raw_first) if raw_first is not None else None
                second = float(raw_second) if raw_second is not None else None
            except (ValueError, TypeError):
                continue
            if name and first is not None:
                weight = _weight_of(name, weights[dim])
                sums[0] += first * weight
                total_weight += weight
                if second is not None:
                    sums[1] += second * weight
        if total_weight > 0:
            averages = (sums[0] / total_weight, sums[1] / total_weight if second is not None else 0)
        else:
            averages = (0, 0)
        for side, average in zip(("target", "reference"), averages):
            out[side]["dims"][f"{dim}_weighted_avg"] = average
            out[side]["total"] += average * dimension_weights.get(dim, 0)
    return out


def _share(target: float, reference: float) -> float:
    return target / (target + reference) if target + reference > 0 else 0


def race_scores(judged: Mapping[str, Any], criteria: Mapping[str, Any]) -> dict[str, float]:
    """The overall score and each dimension's, the target's share of target plus reference (0 where both are 0,
    or where the judge gave the dimension nothing the criteria weigh)."""
    scores = weighted(judged, criteria)
    target, reference = scores["target"], scores["reference"]
    out = {"overall_score": _share(target["total"], reference["total"])}
    for dim in DIMENSIONS:
        key = f"{dim}_weighted_avg"
        out[dim] = _share(target["dims"][key], reference["dims"][key]) if key in target["dims"] else 0
    return out

"""run.json's `attempts`: each attempt's cost, as the run records it (ragbench._cost.run_cost) and as its samples
hold it (`attempt_cost`, brought into run.json when the samples are rewritten: ragbench._storage.rundir)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from .run_record import AttemptCost
from .run_shapes import is_count


def latest_cost(costs: dict[str, dict[str, float]], cost: object) -> None:
    """`cost` (a sample's `attempt_cost`) into `costs`, the largest count of each attempt's each figure
    (what is not a count is passed over)."""
    if not isinstance(cost, dict) or not isinstance(cost.get("id"), str):
        return
    seen = costs.setdefault(cost["id"], {})
    for name, value in cost.items():
        if is_count(value):
            seen[name] = max(seen.get(name, value), value)


def caught_up(attempt: AttemptCost, latest: Mapping[str, float]) -> AttemptCost:
    """`attempt` with each figure that `latest` (its samples' latest cost, `latest_cost`) holds larger: counts
    only grow while an attempt runs, so each is the larger of the two."""
    recorded = cast(Mapping[str, object], attempt)
    larger = {
        name: value for name, value in latest.items() if not is_count(figure := recorded.get(name)) or value > figure
    }
    return cast(AttemptCost, {**attempt, **larger})


def with_attempt(attempts: list[AttemptCost], attempt: AttemptCost) -> list[AttemptCost]:
    """`attempts` (run.json's) with `attempt`'s cost added, or in place of the entry of the same `id` (its cost
    so far)."""
    earlier = [a for a in attempts if attempt.get("id") is None or a.get("id") != attempt["id"]]
    return [*earlier, attempt.copy()]

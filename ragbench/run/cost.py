"""What a run cost: each attempt's examples, wall time and LLM calls, and the whole run's (first run
and resumes) added up, as results.json's `cost`."""
from __future__ import annotations

from typing import Any


def attempt_cost(attempt_id: str, stats: dict[str, Any], processed: int, wall: float) -> dict[str, Any]:
    """One attempt's cost from the scheduler's statistics."""
    return {"id": attempt_id, "examples": processed, "wall_seconds": round(wall, 3),
            "llm_calls": stats["calls"], **{k: v for k, v in stats.items() if k != "calls"}}


def whole_run_cost(attempts: list[dict[str, Any]]) -> dict[str, Any]:
    """The cost of every attempt of a run (first run and resumes) added up."""
    total: dict[str, Any] = {}
    for attempt in attempts:
        for key, value in attempt.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    total["wall_seconds"] = round(total.get("wall_seconds", 0.0), 3)
    wall = total["wall_seconds"]
    total["examples_per_second"] = round(total.get("examples", 0) / wall, 3) if wall > 0 else 0.0
    total["attempts"] = len(attempts)
    total["interrupted_attempts"] = sum(1 for attempt in attempts if attempt.get("interrupted"))
    return total

"""A sample's `earlier_trace`: the LLM calls of the runs of its example that a later run superseded (an attempt in
which it failed after calling its model, then a `--resume` that ran it again), their token counts only.

`RunDir.finalize_samples` keeps one line of each example and drops the others; the calls of a line it drops were
paid all the same, so the kept line carries them, written in the same rewrite, and results.json's `model_cost`
counts them beside its `trace`'s (ragbench._cost.call_cost): over all attempts, what was sent. A line
that only re-scored the line before it (`rescored`: the same trace, its system not run again) carries what that
line carried and adds nothing: those calls are its own `trace`, counted once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the JSON types only: ragbench._types is a layer beside this one
    from .._values.json_values import JsonObject, JsonValue

EARLIER_TRACE = "earlier_trace"
COUNTS = (
    "prompt_tokens",
    "completion_tokens",
    "cached_prompt_tokens",
    "cache_write_tokens",
    "cache_write_1h_tokens",
)
NAMES = ("kind", "name", "role", "error")  # an LLM step's words a price and a count read


def call_usage(step: JsonValue) -> JsonObject | None:
    """An LLM step of a trace as `earlier_trace` keeps it: its kind, name, role, error, whether the response cache
    answered it and its token counts (no texts); None for a step that is no LLM call."""
    if not isinstance(step, dict) or step.get("kind") != "llm":
        return None
    kept: JsonObject = {name: step[name] for name in NAMES if isinstance(step.get(name), str)}
    kept["cached"] = step.get("cached") is True
    kept.update(
        (count, value)
        for count in COUNTS
        if type(value := step.get(count)) is int and value > 0  # a damaged count is none, never a crash
    )
    return kept


def own_calls(line: JsonObject) -> list[JsonValue]:
    """The LLM calls of a sample line's own `trace`, as `earlier_trace` keeps them."""
    trace = line.get("trace")
    steps = (call_usage(step) for step in (trace if isinstance(trace, list) else []))
    return [step for step in steps if step is not None]


def carried(line: JsonObject) -> list[JsonValue]:
    """The earlier runs' calls a sample line already carries."""
    earlier = line.get(EARLIER_TRACE)
    return list(earlier) if isinstance(earlier, list) else []


def earlier_calls(runs: list[tuple[JsonObject, bool]]) -> list[JsonValue]:
    """The calls of every run of an example before its latest saved line: `runs`, the example's lines in the order
    saved, each with whether it re-scored the line before it (`rescored`). The first line's carried calls, then
    each line's own calls where the next ran the example again."""
    earlier = carried(runs[0][0])
    for (line, _), (_, rescored) in zip(runs, runs[1:]):
        if not rescored:
            earlier += own_calls(line)
    return earlier


def carrying(latest: JsonObject, runs: list[tuple[JsonObject, bool]]) -> JsonObject:
    """`latest`, an example's latest saved line, carrying the calls of its `runs` before it (`earlier_calls`;
    none: no `earlier_trace`)."""
    calls = earlier_calls(runs)
    line = {name: value for name, value in latest.items() if name != EARLIER_TRACE}
    return {**line, EARLIER_TRACE: calls} if calls else line

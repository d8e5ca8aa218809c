"""What results.json's `efficiency` says (ragbench._cost.efficiency), as the results table's cost columns and
the console's and report.md's lines: the cost of a correct answer beside each key, and per task its calls and
searches per example and its calls' latency."""

from __future__ import annotations

from .cost_schema import CostFigures

COLUMNS = ("tokens / correct", "$ / correct")


def number(value: float | None, places: int = 1) -> str:
    """A figure with `places` decimals, or "-" where there is none."""
    return "-" if value is None else f"{value:,.{places}f}"


def dollars(value: float | None) -> str:
    return "-" if value is None else f"${value:.6f}" if value < 0.01 else f"${value:.4f}"


def cost_cells(results: CostFigures, task: str, key: str) -> tuple[str, str]:
    """The tokens and dollars per correct answer of a task's key: "-" where no correct answer was counted, the key
    counts none (no bounded range) or a model has no price."""
    figures = (results.efficiency or {}).get(task)
    entry = figures["per_correct"].get(key) if figures else None
    if entry is None:
        return "-", "-"
    return number(entry.get("tokens_per_correct")), dollars(entry.get("usd_per_correct"))


def has_cost_columns(results: CostFigures) -> bool:
    return any(figures.get("per_correct") for figures in (results.efficiency or {}).values())


def efficiency_parts(results: CostFigures) -> dict[str, str]:
    """Per task: its LLM calls and searches per example, its tokens and the latency of each call kind sent (why
    it has no dollar figures is the `model_cost` line's): what follows "TASK: per example " in its line."""
    parts = {}
    for task, figures in (results.efficiency or {}).items():
        latency = "; ".join(
            f"{kind} p50 {number(each['p50'], 3)} s, p95 {number(each['p95'], 3)} s over {each['calls']} calls"
            for kind, each in figures["latency_seconds"].items()
            if each["calls"]
        )
        parts[task] = (
            f"(all {figures['examples']}, failed ones too) LLM calls "
            f"{figures['llm_calls_per_example']:.2f}, searches {figures['searches_per_example']:.2f}, "
            f"tokens {figures['tokens']:,} in all" + (f"; latency {latency}" if latency else "")
        )
    return parts


def efficiency_lines(results: CostFigures) -> list[str]:
    """`efficiency_parts`, each a line of its task's."""
    return [f"{task}: per example {part}" for task, part in efficiency_parts(results).items()]

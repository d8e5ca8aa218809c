"""`ragbench compare`'s cost table: every run's value of each task and key beside what a correct answer cost it
(results.json `efficiency`), its calls and searches per example and their latency, and which runs are on the Pareto
front of quality and cost (no other run is as good or better on both and strictly better on one).

Cost is the dollars per correct answer where every run that has the key is priced, else the tokens per correct
answer. A run with no correct answer has no cost per correct answer: an infinite cost, which any run with a value
at least as high beats. A run without the key's value (it could not be computed) or without `efficiency` (results
written before it) is not placed on the front."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .cost_schema import CostedRun, Efficiency, KeyEfficiency, Latency
from .efficiency_lines import dollars, number


def dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """(quality, cost) `a` is at least as good as `b` on both (higher quality, lower cost) and better on one."""
    return a[0] >= b[0] and a[1] <= b[1] and (a[0] > b[0] or a[1] < b[1])


def pareto_front(points: Sequence[tuple[float, float]]) -> list[bool]:
    """For each (quality, cost) point, whether no other point dominates it."""
    return [not any(dominates(other, point) for other in points) for point in points]


@dataclass
class CostRow:
    """One run's row of a task's key: its value and efficiency figures (None where it has none)."""

    run: str
    value: float | None
    figures: Efficiency | None  # the task's `efficiency`
    key: KeyEfficiency | None  # its `per_correct` entry of the key
    front: bool | None = None  # None: not placed (no value or no efficiency)

    def per_correct(self, unit: str) -> float | None:
        if self.key is None:
            return None
        return self.key.get("usd_per_correct") if unit == "usd" else self.key.get("tokens_per_correct")


def cost_unit(rows: list[CostRow]) -> str:
    """ "usd" where every row with figures has dollars per correct answer (or none for want of a correct answer, with
    its run priced), else "tokens"."""
    placed = [row for row in rows if row.key is not None and row.figures is not None]
    priced = placed and all(row.figures is not None and row.figures.get("usd") is not None for row in placed)
    return "usd" if priced else "tokens"


def cost_rows(runs: Sequence[CostedRun]) -> dict[tuple[str, str], tuple[str, list[CostRow]]]:
    """By (task, key) that some run counts correct answers of and none has graded (a value inside its range: an F1
    whose values were all 0 or 1 in one run is graded in another): the cost unit and each run's row, the front
    marked."""
    out: dict[tuple[str, str], tuple[str, list[CostRow]]] = {}
    efficiency = [(task, figures) for run in runs for task, figures in (run.results.efficiency or {}).items()]
    graded = {(task, key) for task, figures in efficiency for key in figures.get("graded_keys", [])}
    keys = dict.fromkeys(
        (task, key)
        for task, figures in efficiency
        for key in figures.get("per_correct", {})
        if (task, key) not in graded
    )
    for task, key in keys:
        rows = []
        for run in runs:
            figures = (run.results.efficiency or {}).get(task)
            entry = figures["per_correct"].get(key) if figures else None
            rows.append(CostRow(run.label, run.results.results.get(task, {}).get(key), figures, entry))
        unit = cost_unit(rows)
        placed = [row for row in rows if row.value is not None and row.key is not None]
        points = [(float(row.value or 0.0), _cost(row.per_correct(unit))) for row in placed]
        for row, on_front in zip(placed, pareto_front(points)):
            row.front = on_front
        out[(task, key)] = (unit, rows)
    return out


def _cost(value: float | None) -> float:
    return math.inf if value is None else value


def cost_markdown(runs: Sequence[CostedRun]) -> str:
    """The cost table of every run (empty where no run has `efficiency`), front members marked "yes"; each row starts
    with its run, so that no reader takes it for a comparison's row (those start with the task)."""
    table = cost_rows(runs)
    if not table:
        return ""
    lines = [
        "## Cost beside every number (front: no other run is as good on quality and cost and better on one)",
        "",
        "| run | task | metric | value | tokens / correct | $ / correct | LLM calls / example | searches / example "
        "| LLM call p50 / p95 s | search p50 / p95 s | front |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for (task, key), (unit, rows) in table.items():
        for row in rows:
            figures = row.figures
            latency = figures.get("latency_seconds", {}) if figures else {}
            calls = figures.get("llm_calls_per_example") if figures else None
            searches = figures.get("searches_per_example") if figures else None
            lines.append(
                f"| {row.run} | {task} | {key} | {number(row.value, 4)} | {number(row.per_correct('tokens'))} | "
                f"{dollars(row.per_correct('usd'))} | {_per_example(calls)} | "
                f"{_per_example(searches)} | {_latency(latency.get('llm'))} | "
                f"{_latency(latency.get('search'))} | {_front(row.front, unit)} |"
            )
    return "\n".join([*lines, ""])


def _per_example(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _latency(each: Latency | None) -> str:
    if not each or not each.get("calls"):
        return "-"
    return f"{number(each['p50'], 3)} / {number(each['p95'], 3)}"


def _front(front: bool | None, unit: str) -> str:
    if front is None:
        return "-"
    return f"yes ({'$' if unit == 'usd' else 'tokens'})" if front else "no"


def front_lines(runs: Sequence[CostedRun]) -> list[str]:
    """The console's part of the cost table: per task and key, the runs on the front and the others, each with its
    value and cost per correct answer (the whole table: `cost_markdown`)."""
    lines = []
    for (task, key), (unit, rows) in cost_rows(runs).items():
        shown: dict[bool | None, list[str]] = {True: [], False: [], None: []}
        for row in rows:
            cost = row.per_correct(unit)
            price = "-" if cost is None else dollars(cost) if unit == "usd" else f"{number(cost)} tokens"
            shown[row.front].append(f"{row.run} ({number(row.value, 4)} at {price})")
        lines.append(
            f"{task} {key}: front {', '.join(shown[True])}"
            + (f"; beaten: {', '.join(shown[False])}" if shown[False] else "")
            + (f"; not placed: {', '.join(shown[None])}" if shown[None] else "")
        )
    return ["cost per correct answer (value at cost; the front: no run is as good on both and better on one):", *lines]

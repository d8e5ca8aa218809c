"""Whether two runs' numbers on a task compare like for like: the same budget per example, measured from their
traces (passages shown to the reader, searches; results.json `budget`), the same prompt style (run.json
`like_for_like`, from `System.prompt_style`), and the same temperature and top_p in their LLM calls, as sent
(results.json `sampling`). Where they differ, `ragbench compare` says what differs, in words,
once per task (its summary: once per pair of runs), and its table marks the task's rows "no"."""

from __future__ import annotations

from typing import Any

from .budget import QUANTITIES, format_mean
from .results_schema import Results
from .sampling_used import used

COMPARED_BUDGETS = ("passages_shown", "searches")  # the measured budgets a like-for-like comparison shares
COMPARED_DECODING = ("temperature", "top_p")  # the decoding settings it shares over all calls (`sampling`)
DECLARED = {"passages": "passages shown per reader call (option)", "searches": "searches allowed (option)"}


def unlike(a: Results, b: Results, task: str) -> list[str]:
    """What keeps the runs' numbers on `task` from being like for like, each in words ("passages shown to the
    reader 1.00 vs 3.00 per example"); empty where nothing does or nothing is known. A budget neither run
    measured is compared as the systems declare it (`like_for_like` of run.json)."""
    measured_a: dict[str, Any] = dict((a.budget or {}).get(task) or {})
    measured_b: dict[str, Any] = dict((b.budget or {}).get(task) or {})
    declared_a: dict[str, Any] = (a.config.get("like_for_like") or {}).get(task) or {}
    declared_b: dict[str, Any] = (b.config.get("like_for_like") or {}).get(task) or {}
    reasons = []
    for key in COMPARED_BUDGETS:
        x, y = measured_a.get(key), measured_b.get(key)
        if x is not None and y is not None and format_mean(x) != format_mean(y):
            reasons.append(f"{QUANTITIES[key]} {format_mean(x)} vs {format_mean(y)} per example")
    if not (measured_a and measured_b):
        reasons += [
            f"{label} {declared_a[key]} vs {declared_b[key]}"
            for key, label in DECLARED.items()
            if declared_a.get(key) is not None
            and declared_b.get(key) is not None
            and declared_a[key] != declared_b[key]
        ]
    style_a, style_b = declared_a.get("prompt_style"), declared_b.get("prompt_style")
    if style_a and style_b and style_a != style_b:
        reasons.append(f"prompt style {style_a} vs {style_b}")
    used_a, used_b = used(a, task), used(b, task)
    if used_a is not None and used_b is not None:
        reasons += [
            f"{name} {', '.join(used_a[name])} vs {', '.join(used_b[name])}"
            for name in COMPARED_DECODING
            if set(used_a[name]) != set(used_b[name])
        ]
    return reasons


def budget_rows(runs: list[tuple[str, Any]], task: str) -> list[str]:
    """A markdown table of each run's measured budget per example on `task` (`runs`: (label, Results))."""
    rows = ["| run | " + " | ".join(QUANTITIES.values()) + " |", "|---|" + "---:|" * len(QUANTITIES)]
    for label, results in runs:
        budget = (results.budget or {}).get(task)
        if budget is None:
            cells = ["not recorded"] * len(QUANTITIES)
        else:
            unknown = budget.get("not_measured") or {}
            cells = ["not measured" if key in unknown else format_mean(budget.get(key)) for key in QUANTITIES]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return rows

"""Whether two runs' numbers on a task compare like for like: the same budget per example, measured from their
traces (passages shown to the reader, searches; results.json `budget`), the same prompt style (run.json
`like_for_like`, from the system's declared `prompt_style`), the same temperature and top_p in their LLM calls, as sent
(results.json `sampling`), and, for a key a judge scores, the same judge (its --judge engines with their options,
and `--judge-repeats`: a judged number is the judge's as much as the system's). Where they differ, `ragbench
compare` says what differs, in words, once per task (its summary: once per pair of runs), and its table marks the
task's rows "no"."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

from ..._cost.budget import QUANTITIES, format_mean
from ..._errors import ConfigError
from ..._metric import Metric
from ..._values.json_values import JsonValue, json_object
from ..results.sampling_used import used
from ..results.schema import Results

# the measured budgets a like-for-like comparison shares
COMPARED_BUDGETS: tuple[Literal["passages_shown", "searches"], ...] = ("passages_shown", "searches")
COMPARED_DECODING = ("temperature", "top_p")  # the decoding settings it shares over all calls (`sampling`)
MetricClass = Callable[[str], type[Metric]]  # a metric's class by its name (`Registry.metric_class`)
DECLARED_BUDGETS = {"passages": "passages shown per reader call (option)", "searches": "searches allowed (option)"}


def unlike(a: Results, b: Results, task: str) -> list[str]:
    """What keeps the runs' numbers on `task` from being like for like, each in words ("passages shown to the
    reader 1.00 vs 3.00 per example"); empty where nothing does or nothing is known. A budget neither run
    measured is compared as the systems declare it (`like_for_like` of run.json)."""
    measured_a, measured_b = (a.budget or {}).get(task), (b.budget or {}).get(task)
    declared_a = json_object(json_object(a.config.get("like_for_like")).get(task))
    declared_b = json_object(json_object(b.config.get("like_for_like")).get(task))
    reasons = []
    for key in COMPARED_BUDGETS:
        x, y = (measured_a.get(key) if measured_a else None), (measured_b.get(key) if measured_b else None)
        if x is not None and y is not None and format_mean(x) != format_mean(y):
            reasons.append(f"{QUANTITIES[key]} {format_mean(x)} vs {format_mean(y)} per example")
    if not (measured_a and measured_b):
        reasons += [
            f"{label} {declared_a[key]} vs {declared_b[key]}"
            for key, label in DECLARED_BUDGETS.items()
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


def judge_differences(a: Mapping[str, JsonValue], b: Mapping[str, JsonValue]) -> list[str]:
    """The ways two runs' configurations judge differently, in words ("judge openai:x vs openai:y"); empty
    where neither names a judge."""
    if not (a.get("judges") or b.get("judges")):
        return []
    reasons = []
    judges_a, judges_b = judge_names(a), judge_names(b)
    if judges_a != judges_b:
        reasons.append(f"judge {judges_a} vs {judges_b}")
    repeats_a, repeats_b = a.get("judge_repeats") or 1, b.get("judge_repeats") or 1  # left out: once
    if repeats_a != repeats_b:
        reasons.append(f"judge repeats {repeats_a} vs {repeats_b}")
    return reasons


def judged_keys(config: Mapping[str, JsonValue], task: str, metric_class: MetricClass) -> set[str] | None:
    """The keys of `task` that a metric asking a judge reports (the run's `metric_configs` name the metrics,
    `metric_class` gives their classes; a `key_prefix` of the run's metric options is put before them); None
    where a metric's class is not there to say (every key may then be judged)."""
    keys: set[str] = set()
    prefixes = json_object(config.get("metric_args"))
    metrics = json_object(config.get("metric_configs")).get(task)
    for metric in metrics if isinstance(metrics, list) else []:
        try:
            found = metric_class(str(json_object(metric).get("name")))
        except ConfigError:
            return None
        if "judge" in found.declares.needs:
            prefix = str(prefixes.get(f"{found.name}.key_prefix", ""))
            keys |= {prefix + key for key in (found.declares.keys or (found.name,))}
    return keys


def judge_names(config: Mapping[str, JsonValue]) -> str:
    """A run's judges as one names them: each --judge with its options ("openai:x (temperature=0.7)"), "none"."""
    options = json_object(config.get("judge_args"))
    judges = config.get("judges")
    named = []
    for i, judge in enumerate(judges if isinstance(judges, list) else []):
        given = options.get(str(i))
        shown = (
            ", ".join(f"{k}={v}" for k, v in sorted(given.items(), key=lambda item: str(item[0])))
            if isinstance(given, dict)
            else ""
        )
        named.append(f"{judge}" + (f" ({shown})" if shown else ""))
    return " + ".join(named) or "none"


def budget_rows(runs: list[tuple[str, Results]], task: str) -> list[str]:
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

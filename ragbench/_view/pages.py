"""The data of each viewer page as JSON-able dicts (their shapes: ragbench._view.page_data): what the server
answers under /api/ and what the static export writes. The browser (static/app.js) renders it; nothing here makes
HTML."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._config.run_config import run_options
from .._cost.budget import QUANTITIES, repeated_work_lines
from .._cost.efficiency_lines import cost_cells, efficiency_lines, has_cost_columns
from .._reports.judging.human_agreement_lines import judging_by_task
from .._reports.judging.judge_agreement import agreement_cell, judge_agreement_lines
from .._reports.judging.judge_swap import judge_swap_lines
from .._reports.results.failures import format_lines
from .._reports.results.schema import Cell, JudgeAgreement, KeyDetails, Results
from .._reports.results.slice_labels import NONE, SliceLabels, SliceValue
from .._reports.results.slice_plots import slice_rows
from .._system import System
from .._values.json_values import JsonObject, JsonValue
from .._values.options import option_defaults
from .example import example_page
from .page_data import (
    ExamplePage,
    FinishedSummary,
    IndexedRow,
    KeyRow,
    RowsPage,
    RunPage,
    RunsPage,
    RunSummary,
    ShownRow,
    TableRow,
    TaskSummary,
)
from .runs import RunFolder, row_failed, table_row

if TYPE_CHECKING:
    from .._registry import Registry

CHUNK = 500  # table rows per request / per exported file

_NOT_SHOWN = {
    "output",
    "progress",
    "max_inflight",
    "task_configs",
    "system_config",
    "metric_configs",
    "retriever_metadata",
    "tasks",
}


def _defaults() -> dict[str, object]:
    out: dict[str, object] = {}
    for f in run_options():
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def system_class(name: JsonValue, registry: Registry) -> type[System] | None:
    """The system plugin's class (for its defaults and `trace_outline`), None when it is not installed."""
    try:
        return registry.load("systems", name) if isinstance(name, str) and name else None
    except Exception:  # not installed here: the generic outline and no defaults
        return None


def system_defaults(cls: type[System]) -> dict[str, object]:
    """A system's options as it records them when given none (its `config()`: a default it works out, as
    r1_searcher's rounds from `max_retrieval_num=None`, is recorded as worked out); a system that cannot be made
    without options: the defaults its signature states."""
    try:
        recorded = cls().config()
    except Exception:  # an option it needs (recorded's path)
        recorded = {}
    return {name: recorded.get(name, default) for name, default in option_defaults(cls).items()}


def config_differences(config: JsonObject, registry: Registry) -> JsonObject:
    """The run's options that differ from ragbench's defaults (system options: from the system's own)."""
    defaults = _defaults()
    out = {k: v for k, v in config.items() if k not in _NOT_SHOWN and v != defaults.get(k, object())}
    cls = system_class(config.get("system"), registry)
    by_task = config.get("system_config")
    if cls is not None and isinstance(by_task, dict):
        own = system_defaults(cls)
        for task, options in by_task.items():
            if not isinstance(options, dict):
                continue  # no system's options: run.json was edited
            changed: JsonObject = {k: v for k, v in options.items() if k in own and own[k] != v}
            if changed:
                out[f"system options ({task})"] = changed
    return out


def _metrics(results: Results, task: str) -> dict[str, KeyRow]:
    """A task's keys as the run's table shows them: value, interval, counts, and where they are, the PPI estimate,
    the judge's agreement and the tokens and dollars per correct answer (`cost`, ragbench._cost.efficiency)."""
    details, agreements = results.details[task], (results.judge_agreement or {}).get(task) or {}
    costs = has_cost_columns(results)
    return {key: _key_row(results, task, key, entry, agreements, costs) for key, entry in details.items()}


def _key_row(
    results: Results, task: str, key: str, entry: KeyDetails, agreements: Mapping[str, JudgeAgreement], costs: bool
) -> KeyRow:
    row: KeyRow = {
        "value": entry.get("value"),
        "ci95": entry.get("ci95"),
        "n": entry.get("n"),
        "n_none": entry.get("n_none"),
        "n_errors": entry.get("n_errors"),
        "higher_is_better": entry.get("higher_is_better"),
        "corpus": entry.get("corpus"),
        "error": entry.get("error"),
    }
    if "ppi" in entry:  # a judged key checked against human labels
        row["ppi"] = entry["ppi"]
    if key in agreements:  # its judge's agreement
        row["judge"] = agreement_cell(agreements[key])
    if costs:
        row["cost"] = cost_cells(results, task, key)
    return row


def run_summary(run: RunFolder) -> RunSummary:
    """A row of the Runs page: finished runs from results.json, a run in progress from its samples so far;
    `state` and `holder` from `RunFolder.status`."""
    results, config = run.results, run.config
    tasks: dict[str, TaskSummary] = {}
    for task in run.tasks:
        if results is not None and task in results.details:
            tasks[task] = {"metrics": _metrics(results, task), "counts": results.counts.get(task)}
        else:
            rows = run.samples(task).rows
            failed = sum(1 for r in rows if row_failed(r))
            tasks[task] = {
                "metrics": {},
                "counts": {"records": len(rows), "scored": len(rows) - failed, "failed": failed},
            }
    system_args = config.get("system_args")
    return {
        "rid": run.rid,
        "name": run.rid,
        "path": str(run.path),
        "system": config.get("system"),
        "model": config.get("model") or (system_args.get("path") if isinstance(system_args, dict) else None),
        "judges": config.get("judges"),
        "finished": results is not None,
        **run.status(),
        "tasks": tasks,
        **_finished_summary(results),
    }


def _finished_summary(results: Results | None) -> FinishedSummary:
    """What a Runs page row shows of results.json (empty before the run is finished)."""
    return {
        "date": results.date if results else None,
        "complete": results.complete if results else None,
        "failures": (results and results.failures) or {},
        "infrastructure_failures": (results and results.infrastructure_failures) or {},
        "token_limit": (results and results.token_limit) or {},
        "cost": (results and results.cost) or {},
    }


def runs_page(runs: list[RunFolder]) -> RunsPage:
    summaries = [run_summary(run) for run in runs]
    by_task: dict[str, list[str]] = {}
    for summary in summaries:
        for task in summary["tasks"]:
            by_task.setdefault(task, []).append(summary["rid"])
    return {"runs": summaries, "comparable": {t: rids for t, rids in by_task.items() if len(rids) > 1}}


def slice_tables(
    details: Mapping[str, KeyDetails],
) -> tuple[dict[str, dict[str, dict[str, Cell]]], dict[str, list[str]]]:
    """Key -> slice field -> value -> entry, every key holding every value any key has (`slice_rows`; a
    results.json of an older ragbench left out the values where a key scored nothing); and per field its
    values in `label_order` (the browser lists an object's integer-like keys first, whatever their order)."""
    keys = [key for key, entry in details.items() if entry.get("slices")]
    tables: dict[str, dict[str, dict[str, Cell]]] = {key: {} for key in keys}
    order: dict[str, list[str]] = {}
    for field in dict.fromkeys(f for key in keys for f in details[key]["slices"]):
        having = [key for key in keys if field in details[key]["slices"]]
        for label, _, cells in slice_rows(details, having, field):
            order.setdefault(field, []).append(label)
            for key, cell in zip(having, cells):
                tables[key].setdefault(field, {})[label] = cell
    return tables, order


def run_page(run: RunFolder, registry: Registry) -> RunPage:
    results = run.results
    config = run.config
    tables = {task: slice_tables(details) for task, details in (results.details if results else {}).items()}
    told = config.get("task_configs")
    task_configs = {t: c if isinstance(c, dict) else {} for t, c in (told.items() if isinstance(told, dict) else ())}
    return {
        **run_summary(run),
        "config": config_differences(config, registry),
        "slices": {task: slices for task, (slices, _) in tables.items()},
        "slice_order": {task: order for task, (_, order) in tables.items()},
        "plot_keys": {t: c.get("plot_keys") for t, c in task_configs.items()},
        "matrix": {t: c["matrix"] for t, c in task_configs.items() if c.get("matrix")},
        "system_stats": (results and results.system_stats) or {},
        "system_reports": (results and results.system_reports) or {},
        "budget": (results and results.budget) or {},
        "budget_quantities": QUANTITIES,
        "judging": judging_by_task(results) if results else {},
        "efficiency": _by_task(efficiency_lines(results)) if results else {},
        "system_warnings": system_warnings(results),
        "judge_notes": judge_notes(results, run.path),
        # lines of samples/<task>.jsonl that are no sample record (cut short, edited, of another shape)
        "bad_lines": {task: run.samples(task).bad_lines() for task in run.tasks},
    }


def _by_task(lines: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in lines:
        task, _, text = line.partition(": ")
        out.setdefault(task, []).append(text)
    return out


def judge_notes(results: Results | None, run: Path | None = None) -> dict[str, list[str]]:
    """By task, the console's lines on its judged keys: the raters' agreement (`judge_agreement`) and, of a
    rescoring with other judges, the judge swap (`judge_swap`)."""
    return lines_by_task(
        results,
        lambda found, task: dataclasses.replace(
            found,
            judge_agreement={task: agreed} if (agreed := (found.judge_agreement or {}).get(task)) else None,
            judge_swap={task: swapped} if (swapped := (found.judge_swap or {}).get(task)) else None,
        ),
        lambda one_task: judge_agreement_lines(one_task, run) + judge_swap_lines(one_task),
    )


def system_warnings(results: Results | None) -> dict[str, list[str]]:
    """By task, the console's warnings about the system's outputs and work: formats its outputs did not follow
    (`format_adherence`) and work that bought nothing (`repeated_work`)."""
    return lines_by_task(
        results,
        lambda found, task: dataclasses.replace(
            found,
            format_adherence={task: (found.format_adherence or {}).get(task) or []},
            repeated_work={task: work} if (work := (found.repeated_work or {}).get(task)) else {},
        ),
        lambda one_task: format_lines(one_task) + repeated_work_lines(one_task),
    )


def lines_by_task(
    results: Results | None,
    narrowed: Callable[[Results, str], Results],
    lines_of: Callable[[Results], list[str]],
) -> dict[str, list[str]]:
    """By task that has any, the console's lines (`lines_of`) of the results narrowed to that task (`narrowed`: the
    results with the fields it reads replaced by that task's)."""
    if results is None:
        return {}
    out: dict[str, list[str]] = {}
    for task in results.results:
        if lines := lines_of(narrowed(results, task)):
            out[task] = lines
    return out


def rows_page(run: RunFolder, task: str, chunk: int) -> RowsPage:
    index = run.samples(task)
    rows = index.rows
    higher = {
        k: e.get("higher_is_better", True)
        for k, e in (run.results.details if run.results else {}).get(task, {}).items()
        if not e.get("corpus")
    }
    keys = list(higher) or list(dict.fromkeys(k for r in rows[:CHUNK] for k in r["scores"]))
    labels = task_slice_labels(rows)
    return {
        "rid": run.rid,
        "task": task,
        "total": len(rows),
        "chunk": chunk,
        "chunk_size": CHUNK,
        "chunks": max(1, -(-len(rows) // CHUNK)),
        "metrics": keys,
        "higher_is_better": {k: higher.get(k, True) for k in keys},
        "slice_labels": {field: field_labels.labels() for field, field_labels in labels.items()},
        "finished": run.results is not None,
        "state": run.status()["state"],
        "rows": [_shown(row, labels) for row in rows[chunk * CHUNK : (chunk + 1) * CHUNK]],
    }


def task_slice_labels(rows: Sequence[TableRow]) -> dict[str, SliceLabels]:
    """Per slice field, the labels of its values over a task's rows, as results.json names its slices."""
    in_slices = [r["slice_values"] for r in rows if r["slice_values"] is not None]  # bad records are in none
    return {
        field: SliceLabels(values.get(field, NONE) for values in in_slices)
        for field in sorted({f for values in in_slices for f in values})
    }


def _slices(values: Mapping[str, SliceValue] | None, labels: Mapping[str, SliceLabels]) -> dict[str, str]:
    """A row's slice label per field, as results.json names its slice (a bad record, `values` None: none)."""
    if values is None:
        return {}
    return {field: field_labels.label(values.get(field, NONE)) for field, field_labels in labels.items()}


def _shown(row: IndexedRow, labels: Mapping[str, SliceLabels]) -> ShownRow:
    """A table row as the Examples page lists it: its slice labels (`slices`) for what they are made of."""
    return {
        "id": row["id"],
        "question": row["question"],
        "answer": row["answer"],
        "gold": row["gold"],
        "scores": row["scores"],
        "error": row["error"],
        "score_errors": row["score_errors"],
        "n": row["n"],
        "slices": _slices(row["slice_values"], labels),
    }


def example_data(run: RunFolder, task: str, n: int, registry: Registry) -> ExamplePage:
    index = run.samples(task)
    record = index.record(n)
    return {
        "rid": run.rid,
        "task": task,
        "n": n,
        **example_page(record, system_class(run.config.get("system"), registry), run),
        "slices": _slices(table_row(record)["slice_values"], task_slice_labels(index.rows)),
    }

"""The Compare page: `ragbench compare`'s paired statistics (ragbench._reports.compare.comparison, unchanged: the runs'
scores read line by line into columns) of every run against the first on one task, and the examples on which they
disagree."""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np

from .._cost.budget import QUANTITIES
from .._errors import ConfigError
from .._reports.compare.comparison import ITERATIONS, Run, adjust_p_values, compare_runs, load_run
from .._reports.compare.full_report import p_values_note, runs_line
from .._reports.compare.like_for_like import MetricClass
from .._reports.compare.run_scores import TaskScores
from .page_data import ComparePage, DisagreementRow, Disagreements, IndexedRow, Pair, Side
from .runs import RunFolder, clip

LISTED = 500  # disagreements listed per direction and metric


def _binary(runs: list[Run], task: str, metric: str) -> bool:
    """Whether the key has values in the runs and every saved one is 0 or 1 (right or wrong)."""
    scores = [run.samples[task] for run in runs if task in run.samples]
    if any(s.has_odd(metric) for s in scores):
        return False
    values = np.concatenate([s.values(metric) for s in scores]) if scores else np.empty(0)
    values = values[~np.isnan(values)]
    return len(values) > 0 and bool(np.all((values == 0) | (values == 1)))


def disagreements(
    a: Run, b: Run, task: str, metric: str, higher_is_better: bool, folders: tuple[RunFolder, RunFolder]
) -> Disagreements:
    """Examples scored in both runs where one is right (the metric's good value) and the other wrong, with
    the question and each run's answer from the runs' example tables (`a` and `b` hold only scores); the first
    LISTED of each side in id order, and how many there are."""
    good = 1.0 if higher_is_better else 0.0
    none = TaskScores((), ())
    first, second = a.samples.get(task, none), b.samples.get(task, none)
    shared = sorted(first.ids() & second.ids())
    x, y = first.values(metric)[first.places(shared)], second.values(metric)[second.places(shared)]
    differ = ~np.isnan(x) & ~np.isnan(y) & (x != y)
    tables = folders[0].samples(task), folders[1].samples(task)

    def side(right: np.ndarray) -> Side:
        rows: list[DisagreementRow] = []
        for place in np.flatnonzero(right)[:LISTED]:
            example_id = shared[place]
            n_a, n_b = tables[0].position(example_id), tables[1].position(example_id)
            row_a, row_b = (table.rows[n] if n is not None else None for table, n in zip(tables, (n_a, n_b)))
            rows.append(
                {
                    "id": example_id,
                    "question": clip(_field(row_a, "question"), 160),
                    "answer_a": clip(_field(row_a, "answer"), 160),
                    "answer_b": clip(_field(row_b, "answer"), 160),
                    "n_a": n_a,
                    "n_b": n_b,
                }
            )
        return {"count": int(np.sum(right)), "rows": rows}

    return {"metric": metric, "a_right": side(differ & (x == good)), "b_right": side(differ & (x != good))}


def _field(row: IndexedRow | None, name: Literal["question", "answer"]) -> str | None:
    """A text of an example's table row; None where the run's table has no row of it."""
    return None if row is None else row[name]


def compare_page(
    folders: list[RunFolder], task: str, metric_class: MetricClass | None = None, iterations: int = ITERATIONS
) -> ComparePage:
    """The finished runs of `folders` compared (the first finished one is A); the others listed in `unfinished`,
    so that a run in progress, or one stopped, beside the task's runs leaves the page for the rest."""
    if len(folders) < 2:
        raise ConfigError(f"compare: {task} needs two or more runs")
    unfinished = [f.rid for f in folders if f.results is None]
    folders = [f for f in folders if f.results is not None]
    page: ComparePage = (
        compare_finished(folders, task, iterations, metric_class) if len(folders) >= 2 else {"task": task, "runs": []}
    )
    if unfinished:
        page["unfinished"] = unfinished
        page["unfinished_note"] = (
            f"not compared, not finished (stopped or running; --resume finishes it): {', '.join(unfinished)}"
        )
        if len(folders) < 2:
            page["error"] = f"compare needs two finished runs of {task}; {page['unfinished_note']}"
    return page


def compare_finished(
    folders: list[RunFolder], task: str, iterations: int, metric_class: MetricClass | None = None
) -> ComparePage:
    try:
        loaded = [load_run(f.path) for f in folders]
    except ConfigError as exc:  # e.g. a sample file removed: the page says so, the export goes on
        return {"task": task, "runs": [f.rid for f in folders], "error": str(exc)}
    details = loaded[0].results.details.get(task, {})
    compared, problems = [], []
    for folder, other in zip(folders[1:], loaded[1:]):
        try:
            compared.append(
                (folder, other, compare_runs(loaded[0], other, iterations=iterations, metric_class=metric_class))
            )
        except ConfigError as exc:  # nothing to compare (no metric in common): said, the other pairs shown
            problems.append(str(exc))
    reports = [report for _, _, report in compared]
    for report in reports:  # the page shows one task: its rows are the family adjusted together
        report.rows = [row for row in report.rows if row.task == task]
    adjust_p_values(reports)
    pairs: list[Pair] = []
    for folder, other, report in compared:
        # right and wrong only where the key has a better value (RGB's `rejected` has none)
        metrics = [
            m
            for m in details
            if not details[m].get("corpus")
            and details[m].get("higher_is_better", True) is not None
            and _binary([loaded[0], other], task, m)
        ]
        pairs.append(
            {
                "a": folders[0].rid,
                "b": folder.rid,
                "runs": runs_line(report),
                "warnings": report.warnings,
                "differences": [difference.line() for difference in report.differences],
                "budgets": {
                    rid: (run.results.budget or {}).get(task)
                    for rid, run in ((folders[0].rid, loaded[0]), (folder.rid, other))
                },
                "rows": [dataclasses.asdict(r) for r in report.rows],
                "p_note": p_values_note(report),
                "disagreements": [
                    disagreements(
                        loaded[0], other, task, m, bool(details[m].get("higher_is_better", True)), (folders[0], folder)
                    )
                    for m in metrics
                ],
            }
        )
    page: ComparePage = {
        "task": task,
        "runs": [f.rid for f in folders],
        "pairs": pairs,
        "budget_quantities": QUANTITIES,
    }
    if problems:
        page["error"] = "; ".join(problems)
    return page

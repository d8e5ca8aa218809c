"""The table printed at the end of a run and written to report.md."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._cost.budget import budget_line, repeated_work_lines
from .._cost.cost_lines import judge_cost_lines, model_cost_lines
from .._cost.cost_schema import Cost, RescoringCost
from .._cost.efficiency_lines import COLUMNS, cost_cells, efficiency_parts, has_cost_columns
from .._storage import page_cache
from .._storage.store_checks import health_lines
from .._values.json_values import JsonObject, json_object
from .judging.human_agreement_lines import agreement_sections
from .judging.judge_agreement import agreement_cell, judge_agreement_lines
from .judging.judge_swap import judge_swap_lines
from .results.config_diff import retriever
from .results.failures import (
    counted_lines,
    failure_group_line,
    format_lines,
    incomplete_reason,
    message_lines,
    repair_lines,
)
from .results.schema import Cell, KeyDetails, Results, direction, reported_errors, reported_notes
from .results.slice_plots import SliceMatrix, slice_matrix, slice_rows


def _fmt(value: float | None, places: int = 4) -> str:
    """A value with `places` decimals; one of a billion or more in 7 significant digits (not 300 of them)."""
    return "-" if value is None else f"{value:.{places}f}" if abs(value) < 1e9 else f"{value:.7g}"


def results_table(results: Results) -> str:
    """Markdown table: task, metric, which way is better, value ("error" where it could not be computed),
    95% interval, n, not scorable, errors (the example or the metric failed), and where a task counts a
    missing or failed prediction as wrong (its official script's headline, ragbench._reports.results.missing_as_wrong)
    a column with the mean over the answered examples only, with its n; where a judge scored keys, each one's
    judge agreement (`judge_agreement`: measured, or not) and, with human labels, its PPI estimate; last, where the
    run has `efficiency`, the tokens and dollars per correct answer ("-" where none was counted or a model has no
    price)."""
    entries = [(task, key, entry) for task, metrics in results.details.items() for key, entry in metrics.items()]
    answered = any("answered" in entry for _, _, entry in entries)
    agreements = results.judge_agreement or {}
    judged = any(agreements.values())
    ppi = any("ppi" in entry for _, _, entry in entries)
    costs = has_cost_columns(results)
    rows = [
        "| task | metric | better | value | 95% CI | n | none | errors |"
        + (" answered only |" if answered else "")
        + (" judge agreement |" if judged else "")
        + (" PPI with human labels |" if ppi else "")
        + ("".join(f" {column} |" for column in COLUMNS) if costs else ""),
        "|---|---|---|---:|---|---:|---:|---:|"
        + ("---:|" if answered else "")
        + ("---|" if judged else "")
        + ("---|" if ppi else "")
        + ("---:|" * len(COLUMNS) if costs else ""),
    ]
    for task, key, entry in entries:
        ci = entry.get("ci95")
        ci_text = f"[{_fmt(ci[0])}, {_fmt(ci[1])}]" if ci else "-"
        better = direction(entry.get("higher_is_better", True))
        value = "error" if entry.get("error") else _fmt(entry["value"])  # its cause is under failures
        errors = f"{entry['n_errors']}" + (" (as 0)" if entry.get("n_errors") and "answered" in entry else "")
        rows.append(
            f"| {task} | {key} | {better} | {value} | {ci_text} | {entry['n']} | {entry['n_none']} | {errors} |"
            + (f" {_answered(entry)} |" if answered else "")
            + (f" {agreement_cell(agreements.get(task, {}).get(key))} |" if judged else "")
            + (f" {_ppi(entry)} |" if ppi else "")
            + ("".join(f" {cell} |" for cell in cost_cells(results, task, key)) if costs else "")
        )
    return "\n".join(rows)


def _ppi(entry: Cell) -> str:
    """A judged key's prediction-powered estimate and interval from its human labels (`ppi`), else "-"."""
    cell = entry.get("ppi")
    if cell is None:
        return "-"
    low, high = cell["ci95"]
    return f"{_fmt(cell['value'])} [{_fmt(low)}, {_fmt(high)}] (n={cell['n_labelled']}, N={cell['n_unlabelled']})"


def _answered(entry: KeyDetails) -> str:
    """The answered-only view of a key whose headline counts missing predictions as 0, else "-"."""
    answered = entry.get("answered")
    return "-" if answered is None else f"{_fmt(answered['value'])} (n={answered['n']})"


def counts_table(results: Results) -> str:
    """The records of each task and what became of them, with the digest of its data (`data_sha256`: equal
    in two runs that scored the same examples; shortened, in full in results.json)."""
    rows = [
        "| task | records | scored | failed examples | bad records | missing | metric failures | data sha256 |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    digests = results.data_sha256 or {}  # absent from results written before it was recorded
    for task, counts in results.counts.items():
        rows.append(
            f"| {task} | {counts['records']} | {counts['scored']} | {counts['failed']} | "
            f"{counts['bad_records']} | {counts.get('missing', 0)} | {counts.get('metric_failures', 0)} | "
            f"{digests[task][:12] if task in digests else '-'} |"
        )
    return "\n".join(rows)


def cost_line(cost: Cost, notices: bool = True, examples: int | None = None) -> str:
    """The run's cost and what went wrong with its caches; without the caches' notices (a file moved
    aside or left out) where `notices` is False: the console's summary, whose run warned of each one
    when the cache opened. `examples`: the run's examples (`examples_run`); where its attempts ran more (an
    example that failed or was cut short runs again on --resume), the runs are said beside them."""
    return (
        examples_phrase(cost, examples)
        + f"; LLM calls {cost['llm_calls']} in {cost['batches']} batches, cache hits {cost['cache_hits']}, "
        f"tokens {cost['prompt_tokens']} in / {cost['completion_tokens']} out"
        + computed_note(cost.get("engine"))
        + start_note(cost.get("retrieval"))
        + "".join("\n" + line for line in health_lines("response cache", cost.get("response_cache"), notices))
        + ("\n" + (page_cache.console_line(cost["page_cache"], notices) or "") if cost.get("page_cache") else "")
        + ("\n" + rescoring_line(cost["rescoring"]) if cost.get("rescoring") else "")
    )


def examples_run(results: Results) -> int:
    """The examples a run ran, each once (scored or failed), however many attempts ran them."""
    return sum(counts["scored"] + counts["failed"] for counts in results.counts.values())


def examples_phrase(cost: Cost, examples: int | None = None) -> str:
    """The examples, the time and the rate of the cost line; over several attempts, how many and those
    interrupted, and the runs of an example where they are more than the `examples` (cost's `examples` counts
    the runs of every attempt)."""
    runs = cost["examples"]
    examples = runs if examples is None else examples
    attempts = f" over {cost['attempts']} attempts" if cost.get("attempts", 1) > 1 else ""
    if cost.get("interrupted_attempts"):
        attempts += f" ({cost['interrupted_attempts']} interrupted)"
    rate = f"{cost['examples_per_second']:.2f}/s"
    if runs <= examples:  # fewer runs than examples: a rescore's or an older run's cost, which counts them alone
        return f"{runs} examples in {cost['wall_seconds']:.1f} s ({rate}){attempts}"
    return (
        f"{examples} examples in {cost['wall_seconds']:.1f} s{attempts}, {runs} runs of an example among them "
        f"({rate}; one that failed or was cut short runs again)"
    )


def start_note(retrieval: Mapping[str, float] | None) -> str:
    """The seconds the retriever took to open (its index loaded; a sharded one's actors started and their shards
    fetched), said apart: no search's latency holds them."""
    if not retrieval or retrieval.get("start_seconds") is None:
        return ""
    return f"; retriever opened in {retrieval['start_seconds']:.1f} s before its searches (not in their latency)"


def computed_note(engine: JsonObject | None) -> str:
    """How many of this attempt's prompt tokens the model computed, where its engine reused cached ones (the hf
    engine's prefix cache)."""
    if not engine or not engine.get("prompt_tokens_sent"):
        return ""
    return f" (prompt tokens computed {engine['prompt_tokens_computed']} of {engine['prompt_tokens_sent']} sent)"


def rescoring_line(cost: RescoringCost) -> str:
    """`ragbench rescore`'s own cost (the lines above are the original run's)."""
    return (
        f"re-scored {cost['examples']} examples in {cost['wall_seconds']:.1f} s without running the system: "
        f"judge/NLI calls {cost['llm_calls']} in {cost['batches']} batches, cache hits {cost['cache_hits']}"
    )


def failure_lines(results: Results) -> list[str]:
    """What went wrong, grouped (console and report): failed records by cause with their ids, problems
    a system reported outside any example (and its notes of what was read in its stead), failed calls folded into results, and outputs cut at their
    token limit."""
    lines = [failure_group_line(task, entry) for task, causes in (results.failures or {}).items() for entry in causes]
    for task, report in (results.system_reports or {}).items():
        lines += message_lines(task, [str(e) for e in reported_errors(report)])
        lines += message_lines(task, [str(note) for note in reported_notes(report)])
    for task, infra in (results.infrastructure_failures or {}).items():
        lines.append(
            f"{task}: {infra['calls']} failed judge/tool/retrieval call(s) in {infra['examples']} scored "
            "example(s) were folded into results as upstream does (--strict-infra fails them instead): "
            + "; ".join(f"{c['count']} x {c['cause']}" for c in infra["causes"])
        )
    for task, cut in (results.token_limit or {}).items():
        scored = results.counts[task]["scored"] if task in results.counts else "?"
        steps = ", ".join(f"{name} {count}" for name, count in cut["steps"].items())
        lines.append(
            f"{task}: {cut['calls']} LLM call(s) in {cut['examples']} of {scored} scored examples stopped at "
            f"their max_tokens, their outputs cut there ({steps})"
        )
    return lines + counted_lines(results) + format_lines(results) + repeated_work_lines(results) + repair_lines(results)


def budget_lines(results: Results) -> list[str]:
    """Each task's budget per example, measured from its traces (`budget`), then what the system's model calls
    (`model_cost`) and judging (`judge_cost`) cost, and each task's calls per example and latency (`efficiency`)."""
    efficiency = efficiency_parts(results)
    budgets = [  # one "per example" line a task: the scored examples' means, then every example's calls
        budget_line(task, budget) + (f"; {efficiency.pop(task)}" if task in efficiency else "")
        for task, budget in (results.budget or {}).items()
    ]
    rest = [f"{task}: per example {part}" for task, part in efficiency.items()]
    return budgets + model_cost_lines(results) + judge_cost_lines(results) + rest


def models_line(config: JsonObject) -> str:
    """Every model the run used: the system's, the judges', the NLI model (or where outputs came from); then the
    retriever it searched (its index and shards)."""
    model, judges = config.get("model"), config.get("judges")
    parts = [
        f"model `{model}`"
        if model
        else f"outputs recorded in `{json_object(config.get('system_args')).get('path', '?')}`"
    ]
    if isinstance(judges, list) and judges:
        parts.append("judges " + ", ".join(f"`{j}`" for j in judges))
    if config.get("nli"):
        parts.append(f"NLI `{config['nli']}`")
    return ", ".join([*parts, retriever(config)])


def _ci(entry: Cell) -> str:
    ci = entry.get("ci95")
    return f"{_fmt(entry.get('value'))} [{_fmt(ci[0], 3)}, {_fmt(ci[1], 3)}]" if ci else _fmt(entry.get("value"))


def slice_sections(results: Results, run_dir: Path | None = None) -> list[str]:
    """Per task and slice field: a table (every slice value; n, the most examples a key scored there; then
    value [95% CI] per metric key, with its own n where that is less) and, when the
    task names `plot_keys` and a run folder is given, a bar chart of them under plots/."""
    lines: list[str] = []
    for task, details in results.details.items():
        keys = [k for k, e in details.items() if e.get("slices") and e.get("n")]
        fields = list(dict.fromkeys(f for k in keys for f in details[k]["slices"]))
        task_config = json_object(json_object(results.config.get("task_configs")).get(task))
        named = task_config.get("plot_keys")
        plot_keys = [str(key) for key in named] if isinstance(named, list) else []
        for field in fields:
            lines += [
                f"### {task} by {field}",
                "",
                "| " + field + " | n | " + " | ".join(keys) + " |",
                "|---|---:|" + "---|" * len(keys),
            ]
            for label, n, cells in slice_rows(details, keys, field):
                shown = [
                    _ci(cell)
                    + (f" (n={cell.get('n', 0)})" if cell.get("n", 0) < n else "")
                    + (f"; PPI {_ppi(cell)}" if cell.get("ppi") else "")
                    for cell in cells
                ]
                lines.append(f"| {label} | {n} | " + " | ".join(shown) + " |")
            lines.append("")
            if plot_keys and run_dir is not None:
                lines += _plot_line(task, field, details, plot_keys, run_dir)
        matrix = slice_matrix(task_config.get("matrix"))
        if isinstance(matrix, str):
            lines += [f"(no heat map of {task}: its config has {matrix})", ""]
        elif matrix is not None and run_dir is not None:
            lines += _matrix_lines(task, details, matrix, run_dir)
    return lines


def _matrix_lines(task: str, details: Mapping[str, KeyDetails], matrix: SliceMatrix, run_dir: Path) -> list[str]:
    """Heat maps of a task's two-way slice (`matrix` in its config: field, separator, keys, labels)."""
    from .results.slice_plots import matrix_plot

    lines = []
    try:
        paths = [matrix_plot(task, details, key, matrix, run_dir / "plots") for key in matrix["keys"]]
    except ImportError:
        return ["(plots need matplotlib: pip install matplotlib)", ""]
    for key, path in zip(matrix["keys"], paths):
        if path:
            lines += [f"![{task} {key} matrix](plots/{path.name})", ""]
    return lines


def _plot_line(task: str, field: str, details: Mapping[str, KeyDetails], keys: list[str], run_dir: Path) -> list[str]:
    try:
        from .results.slice_plots import slice_plot

        path = slice_plot(task, field, details, keys, run_dir / "plots")
    except ImportError:
        return ["(plots need matplotlib: pip install matplotlib)", ""]
    return [f"![{task} by {field}](plots/{path.name})", ""] if path else []


def _plain(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_plain(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_plain(v) for v in value)
    return str(value)


def system_stats_sections(results: Results) -> list[str]:
    """Per task, the system's own figures (`System.statistics`), one row per top-level key."""
    lines: list[str] = []
    for task, figures in (results.system_stats or {}).items():
        lines += [f"### {task}", "", "| statistic | value |", "|---|---|"]
        lines += [f"| {key} | {_plain(value)} |" for key, value in figures.items()]
        lines.append("")
    return lines


def traceback_sections(results: Results) -> list[str]:
    """The first traceback of each failure cause (where a system or a metric raised), for the plugin's
    developer."""
    lines = []
    for task, causes in (results.failures or {}).items():
        for entry in causes:
            traceback = entry.get("traceback")
            if traceback:
                lines += [
                    f"### {task}: {entry['cause']} (first: {entry['ids'][0] if entry.get('ids') else '?'})",
                    "",
                    "```text",
                    traceback.rstrip("\n"),
                    "```",
                    "",
                ]
    return lines


def report_markdown(results: Results, run_dir: Path | None = None) -> str:
    config, tasks = results.config, results.config.get("tasks")
    lines = [
        f"# ragbench run: {config['system']} on {', '.join(map(str, tasks if isinstance(tasks, list) else []))}",
        "",
        f"{models_line(config)}, seed {config['seed']}, ragbench {results.versions['ragbench']}"
        f" (git {results.versions.get('git_hash') or 'n/a'})"
        + (f", re-scored from `{results.rescored_from}`" if results.rescored_from else "")
        + ("" if results.complete else f" - **incomplete: {incomplete_reason(results)}**"),
        "",
        results_table(results),
        "",
        counts_table(results),
        "",
        cost_line(results.cost, examples=examples_run(results)),
        "",
        *([*(f"{line}  " for line in budget), ""] if (budget := budget_lines(results)) else []),
    ]
    agreement = judge_agreement_lines(results)  # RUN, not this folder's path: report.md moves with the folder
    if agreement:
        lines += ["## Judge agreement", "", *[f"- {line}" for line in agreement], ""]
    swap = judge_swap_lines(results)
    if swap:
        lines += ["## Judge swap", "", *[f"- {line}" for line in swap], ""]
    failures = failure_lines(results)
    if failures:
        lines += ["## What went wrong", "", *[f"- {line}" for line in failures], "", *traceback_sections(results)]
    lines += agreement_sections(results)
    figures = system_stats_sections(results)
    if figures:
        lines += [f"## System statistics ({config['system']})", ""] + figures
    slices = slice_sections(results, run_dir)
    if slices:
        lines += ["## Slices", ""] + slices
    return "\n".join(lines)

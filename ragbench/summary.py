"""The table printed at the end of a run and written to report.md."""
from __future__ import annotations

from typing import Any


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def results_table(results: dict[str, Any]) -> str:
    """Markdown table: task, metric, value, 95% interval, n, not scorable, errors."""
    rows = ["| task | metric | value | 95% CI | n | none | errors |", "|---|---|---:|---|---:|---:|---:|"]
    for task, metrics in results["details"].items():
        for key, entry in metrics.items():
            ci = entry.get("ci95")
            ci_text = f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "-"
            rows.append(f"| {task} | {key} | {_fmt(entry['value'])} | {ci_text} | {entry['n']} | "
                        f"{entry['n_none']} | {entry['n_errors']} |")
    return "\n".join(rows)


def counts_table(results: dict[str, Any]) -> str:
    rows = ["| task | records | scored | failed examples | bad records |", "|---|---:|---:|---:|---:|"]
    for task, counts in results["counts"].items():
        rows.append(f"| {task} | {counts['records']} | {counts['scored']} | {counts['failed']} | "
                    f"{counts['bad_records']} |")
    return "\n".join(rows)


def cost_line(cost: dict[str, Any]) -> str:
    return (f"{cost['examples']} examples in {cost['wall_seconds']:.1f} s ({cost['examples_per_second']:.2f}/s); "
            f"LLM calls {cost['llm_calls']} in {cost['batches']} batches, cache hits {cost['cache_hits']}, "
            f"tokens {cost['prompt_tokens']} in / {cost['completion_tokens']} out")


def report_markdown(results: dict[str, Any]) -> str:
    config = results["config"]
    lines = [
        f"# ragbench run: {config['system']} on {', '.join(config['tasks'])}",
        "",
        f"model `{config['model']}`, seed {config['seed']}, ragbench {results['versions']['ragbench']}"
        f" (git {results['versions'].get('git_hash') or 'n/a'})"
        + ("" if results["complete"] else " - **incomplete: some examples failed, see counts**"),
        "",
        results_table(results),
        "",
        counts_table(results),
        "",
        cost_line(results["cost"]),
        "",
    ]
    return "\n".join(lines)

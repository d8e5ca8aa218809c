"""What results.json's `model_cost`, `judge_cost` and `human_agreement` say, as the console's lines and report.md's section
(the viewer shows the same lines on a run's page)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..results.schema import Results


def _number(value: float | None, places: int = 4) -> str:
    return "-" if value is None else f"{value:.{places}f}"


def _interval(cell: Mapping[str, Any] | None) -> str:
    if not cell:
        return "-"
    low, high = cell["ci95"]
    return f"{_number(cell['value'])} [{_number(low)}, {_number(high)}]"


def money_phrase(cost: Mapping[str, Any]) -> str:
    """A `TokenCost`'s money: dollars, or why there is no figure; with several models, each one's."""
    money = f"${cost['usd']:.4f}" if cost.get("usd") is not None else f"no money figure ({cost.get('usd_note')})"
    shares = [
        f"{label} {share['model']} " + (f"${share['usd']:.4f}" if share.get("usd") is not None else "not priced")
        for label, share in (cost.get("by_model") or {}).items()
    ]
    return money + (f" ({', '.join(shares)})" if shares else "")


def _calls_phrase(cost: Mapping[str, Any]) -> str:
    return (
        f"{cost['calls']} calls ({cost['cached']} from the cache, {cost['errors']} failed), tokens "
        f"{cost['prompt_tokens']} in / {cost['completion_tokens']} out{_prompt_cache_phrase(cost)}, {money_phrase(cost)}"
    )


def _prompt_cache_phrase(cost: Mapping[str, Any]) -> str:
    """What the vendor's prompt cache read and wrote of the prompt tokens, and saved; nothing where it did neither."""
    cache = cost.get("prompt_cache")
    if not cache:
        return ""
    saved = "" if cache.get("usd_saved") is None else f", ${cache['usd_saved']:.4f} saved"
    return f" ({cache['read_tokens']} read from the prompt cache, {cache['write_tokens']} written{saved})"


def judge_cost_lines(results: Results) -> list[str]:
    """One line per task and judged metric: its judge calls, tokens and money."""
    return [
        f"{task}: judging {name}: {_calls_phrase(cost)}"
        for task, metrics in (results.judge_cost or {}).items()
        for name, cost in metrics.items()
    ]


def model_cost_lines(results: Results) -> list[str]:
    """One line per task: the system's own model calls, tokens and money."""
    return [
        f"{task}: the system's model{'' if cost.get('by_model') else ' ' + (cost.get('model') or '?')}: "
        + _calls_phrase(cost)
        for task, cost in (results.model_cost or {}).items()
    ]


def ppi_phrase(entry: Mapping[str, Any]) -> str:
    """The PPI estimate with its interval and the labels it is worth, or why there is none."""
    ppi = entry.get("ppi")
    if not ppi:
        return entry.get("ppi_note") or "no PPI estimate (no human label on a judged example)"
    worth = "" if ppi["effective_n"] is None else f", worth {ppi['effective_n']:.1f} labels ({ppi['gained']:+.1f})"
    return f"PPI {_interval(ppi)} (lambda {ppi['power']:.3f}{worth})"


def agreement_line(task: str, key: str, entry: Mapping[str, Any]) -> str:
    """One judged key against its human labels: agreement, the three means and what was not used."""
    parts = [f"{task}: {key} against human labels ({entry['source']}): n={entry['n_labelled']} labelled"]
    if "accuracy" in entry:
        parts.append(f"accuracy {_number(entry['accuracy'])}, kappa {_number(entry.get('kappa'))}")
    parts.append(f"humans {_interval(entry.get('human_only'))}")
    judge_only = entry.get("judge_only")
    parts.append(f"judge only {_interval(judge_only)} (n={judge_only['n'] if judge_only else 0})")
    parts.append(f"{ppi_phrase(entry)} with N={entry['n_unlabelled']} unlabelled")
    unused = [
        f"{entry[name]} {what}"
        for name, what in (
            ("labels_unjudged", "labels of examples the judge did not score"),
            ("labels_unknown", "labels of no example of the task"),
        )
        if entry.get(name)
    ]
    if unused:
        parts.append("not used: " + ", ".join(unused))
    return "; ".join(parts)


def agreement_lines(results: Results) -> list[str]:
    return [
        agreement_line(task, key, entry)
        for task, keys in (results.human_agreement or {}).items()
        for key, entry in keys.items()
    ]


def judging_by_task(results: Results) -> dict[str, list[str]]:
    """By task, the lines of what the system's model and judging cost and how the judges agree with human labels
    (the viewer's)."""
    out: dict[str, list[str]] = {}
    for line in model_cost_lines(results) + judge_cost_lines(results) + agreement_lines(results):
        task, _, text = line.partition(": ")
        out.setdefault(task, []).append(text)
    return out


def confusion_table(entry: Mapping[str, Any]) -> list[str]:
    """The confusion table in markdown: rows the human's value, columns the judge's."""
    labels = [_number(value, 2) for value in entry["labels"]]
    rows = ["| human \\ judge | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    rows += [
        f"| {label} | " + " | ".join(str(c) for c in counts) + " |" for label, counts in zip(labels, entry["confusion"])
    ]
    return rows


def agreement_sections(results: Results) -> list[str]:
    """report.md's "Judges against human labels": each key's line, confusion table and per-slice PPI table."""
    lines: list[str] = []
    for task, keys in (results.human_agreement or {}).items():
        for key, entry in keys.items():
            lines += [f"### {task}: {key}", "", agreement_line(task, key, entry), ""]
            if "confusion" in entry:
                lines += [*confusion_table(entry), ""]
            for field, cells in (entry.get("slices") or {}).items():
                lines += [
                    f"| {field} | labelled | unlabelled | accuracy | kappa | humans | judge only | PPI |",
                    "|---|---:|---:|---:|---:|---|---|---|",
                ]
                lines += [
                    f"| {label} | {cell['n_labelled']} | {cell['n_unlabelled']} | {_number(cell.get('accuracy'))} | "
                    f"{_number(cell.get('kappa'))} | {_interval(cell.get('human_only'))} | "
                    f"{_interval(cell.get('judge_only'))} | {_interval(cell.get('ppi'))} |"
                    for label, cell in cells.items()
                ]
                lines.append("")
    return ["## Judges against human labels", "", *lines] if lines else []

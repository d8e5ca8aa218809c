"""What results.json's `human_agreement` says, as the console's lines and report.md's section, and by task the lines
of a run's page in the viewer: its model's and judges' cost (ragbench._cost.cost_lines) and the judges against
human labels."""

from __future__ import annotations

from ..._cost.cost_lines import judge_cost_lines, model_cost_lines
from ..results.judging_schema import Check, Interval, KeyCheck
from ..results.schema import Results


def _number(value: float | None, places: int = 4) -> str:
    return "-" if value is None else f"{value:.{places}f}"


def _interval(cell: Interval | None) -> str:
    if not cell:
        return "-"
    low, high = cell["ci95"]
    return f"{_number(cell['value'])} [{_number(low)}, {_number(high)}]"


def ppi_phrase(entry: Check) -> str:
    """The PPI estimate with its interval and the labels it is worth, or why there is none."""
    ppi = entry.get("ppi")
    if not ppi:
        return entry.get("ppi_note") or "no PPI estimate (no human label on a judged example)"
    worth = "" if ppi["effective_n"] is None else f", worth {ppi['effective_n']:.1f} labels ({ppi['gained']:+.1f})"
    return f"PPI {_interval(ppi)} (lambda {ppi['power']:.3f}{worth})"


def agreement_line(task: str, key: str, entry: KeyCheck) -> str:
    """One judged key against its human labels: agreement, the three means and what was not used."""
    parts = [f"{task}: {key} against human labels ({entry['source']}): n={entry['n_labelled']} labelled"]
    if "accuracy" in entry:
        parts.append(f"accuracy {_number(entry['accuracy'])}, kappa {_number(entry.get('kappa'))}")
    parts.append(f"humans {_interval(entry.get('human_only'))}")
    judge_only = entry.get("judge_only")
    parts.append(f"judge only {_interval(judge_only)} (n={judge_only['n'] if judge_only else 0})")
    parts.append(f"{ppi_phrase(entry)} with N={entry['n_unlabelled']} unlabelled")
    unused = [
        f"{count} {what}"
        for count, what in (
            (entry.get("labels_unjudged"), "labels of examples the judge did not score"),
            (entry.get("labels_unknown"), "labels of no example of the task"),
        )
        if count
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


def confusion_table(entry: Check) -> list[str]:
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

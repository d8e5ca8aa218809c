"""A file of human labels (`--human-labels FILE`): one label per example and judged key, that results.json's
`human_agreement` compares the judge with (ragbench._reports.judge_check).

JSONL, one object a line:  {"id": "q17", "metric": "llm_judge", "label": 1}   (and optionally "task": "crag_t1")
CSV, with a header row:    id,metric,label[,task]

`id` is the example's id as the samples show it; `metric` the key as results.json's `details` names it (the
llm_judge metric's `llm_judge`, CRAG's `accuracy` or `score`); `label` a number on that key's scale (a label set's
value: correct 1, incorrect 0); `task`, where given, limits the line to that task (else it applies to every task
of the run that has the example). A line that is not of this form is a ConfigError naming the file and line.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from .._errors import ConfigError

FIELDS = ("id", "metric", "label")


@dataclass
class HumanLabels:
    """Labels by (task or None for every task, key), then example id."""

    path: str
    by_key: dict[tuple[str | None, str], dict[str, float]] = field(default_factory=dict)

    def for_task(self, task: str) -> dict[str, dict[str, float]]:
        """Key -> example id -> label of the lines for `task` or for every task (a task's own line wins)."""
        out: dict[str, dict[str, float]] = {}
        for scope in (None, task):
            for (line_task, key), labels in self.by_key.items():
                if line_task == scope:
                    out.setdefault(key, {}).update(labels)
        return out


def _label(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(f"{where}: label {value!r} is not a number (a label set's value, e.g. 1 or 0)")
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{where}: label {value!r} is not a number (a label set's value, e.g. 1 or 0)") from None
    if not math.isfinite(number):
        raise ConfigError(f"{where}: label {value!r} is not a finite number")
    return number


def _rows(path: Path) -> list[tuple[str, dict[str, object]]]:
    """(where, row) of each line of the file, JSONL or CSV by its name's ending."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--human-labels {path}: cannot be read ({exc}); give a JSONL or CSV file") from None
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        missing = [name for name in FIELDS if name not in (reader.fieldnames or [])]
        if missing:
            raise ConfigError(
                f"--human-labels {path}: the CSV header lacks {', '.join(missing)} (id,metric,label[,task])"
            )
        return [(f"{path}:{number}", dict(row)) for number, row in enumerate(reader, 2)]
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"{path}:{number}: not a JSON object ({exc}); one label object a line") from None
        if not isinstance(row, dict):
            raise ConfigError(f"{path}:{number}: not a JSON object; one label object a line")
        rows.append((f"{path}:{number}", row))
    return rows


def read_human_labels(path: str | Path) -> HumanLabels:
    """The labels of a JSONL or CSV file (see the module's docstring). Raises ConfigError on a bad line, or on
    two labels of one example and key that differ."""
    labels = HumanLabels(str(path))
    for where, row in _rows(Path(path)):
        missing = [name for name in FIELDS if row.get(name) in (None, "")]
        if missing:
            raise ConfigError(f"{where}: no {', '.join(missing)} (each line has id, metric, label and may have task)")
        task = row.get("task") or None
        by_id = labels.by_key.setdefault((None if task is None else str(task), str(row["metric"])), {})
        example, value = str(row["id"]), _label(row["label"], where)
        if by_id.get(example, value) != value:
            raise ConfigError(f"{where}: example {example} already has label {by_id[example]} for {row['metric']}")
        by_id[example] = value
    return labels

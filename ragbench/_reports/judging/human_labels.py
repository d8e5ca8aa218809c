"""A file of human labels (`--human-labels FILE`): one label per example and judged key, that results.json's
`human_agreement` compares the judge with (ragbench._reports.judging.human_agreement).

JSONL, one object a line:  {"id": "q17", "metric": "llm_judge", "label": 1}   (and optionally "task": "crag_t1")
CSV, with a header row:    id,metric,label[,task]

`id` is the example's id as the samples show it; `metric` the key as results.json's `details` names it (the
llm_judge metric's `llm_judge`, CRAG's `accuracy` or `score`); `label` a number on that key's scale (a label set's
value: correct 1, incorrect 0); `task`, where given, limits the line to that task (else it applies to every task
of the run that has the example). A line that is not of this form is a ConfigError naming the file and line.
"""

from __future__ import annotations

import csv
import io
import math
import reprlib
from dataclasses import dataclass, field
from pathlib import Path

from ..._errors import ConfigError
from ..._storage.csv_fields import large_fields
from ..._storage.given_files import given_text
from ..._storage.jsonl import parse_json

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
        raise ConfigError(f"{where}: label {reprlib.repr(value)} is not a number (a label set's value, e.g. 1 or 0)")
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(
            f"{where}: label {reprlib.repr(value)} is not a number (a label set's value, e.g. 1 or 0)"
        ) from None
    except OverflowError:  # an integer past any float
        number = math.inf
    if not math.isfinite(number):
        raise ConfigError(f"{where}: label {reprlib.repr(value)} is not a finite number")
    return number


def _name(value: object, field: str, where: str) -> str:
    """An id, metric or task as the line gives it: a string or a number, not a list or an object."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ConfigError(f"{where}: {field} {reprlib.repr(value)} is not a string or a number")
    return str(value)


def _rows(path: Path) -> list[tuple[str, dict[str, object]]]:
    """(where, row) of each line of the file, JSONL or CSV by its name's ending."""
    text = given_text(path, "a JSONL or CSV file of labels (id, metric, label[, task])", "--human-labels")
    if path.suffix.lower() == ".csv":
        return _csv_rows(path, text)
    rows = []
    for number, line in enumerate(text.split("\n"), 1):  # JSON holds no newline in a value; "\r" is its space
        if not line.strip():
            continue
        try:
            row = parse_json(line)
        except ValueError as exc:  # not JSON, or nested too deeply to parse
            raise ConfigError(f"{path}:{number}: not a JSON object ({exc}); one label object a line") from None
        if not isinstance(row, dict):
            raise ConfigError(f"{path}:{number}: not a JSON object; one label object a line")
        rows.append((f"{path}:{number}", row))
    return rows


def _csv_rows(path: Path, text: str) -> list[tuple[str, dict[str, object]]]:
    """(where, row) of each row of a CSV file's `text`, values of any length; where names the row's last line."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        with large_fields():
            missing = [name for name in FIELDS if name not in (reader.fieldnames or [])]
            if missing:
                raise ConfigError(
                    f"--human-labels {path}: the CSV header lacks {', '.join(missing)} (id,metric,label[,task])"
                )
            return [(f"{path}:{reader.line_num}", dict(row)) for row in reader]
    except csv.Error as exc:
        raise ConfigError(f"{path}:{reader.line_num}: not CSV ({exc})") from None


def read_human_labels(path: str | Path) -> HumanLabels:
    """The labels of a JSONL or CSV file (see the module's docstring). Raises ConfigError on a bad line, or on
    two labels of one example and key that differ."""
    labels = HumanLabels(str(path))
    for where, row in _rows(Path(path)):
        missing = [name for name in FIELDS if row.get(name) in (None, "")]
        if missing:
            raise ConfigError(f"{where}: no {', '.join(missing)} (each line has id, metric, label and may have task)")
        task = row.get("task") or None
        metric = _name(row["metric"], "metric", where)
        by_id = labels.by_key.setdefault((None if task is None else _name(task, "task", where), metric), {})
        example, value = _name(row["id"], "id", where), _label(row["label"], where)
        if by_id.get(example, value) != value:
            raise ConfigError(
                f"{where}: example {reprlib.repr(example)} already has label {by_id[example]} for {reprlib.repr(metric)}"
            )
        by_id[example] = value
    return labels

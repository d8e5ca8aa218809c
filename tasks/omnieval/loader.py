"""Reading OmniEval test sets: the upstream tree `<一级>/<二级>/<task>.jsonl` (one file per topic x
task cell) or one flat JSONL whose records carry `topic_name`/`task_name` (the human-annotated
set's form, upstream data_generator/human_annotated/v1022/v1022.jsonl)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, RecordError
from ragbench.api.data import given_values

from . import catalog


@dataclass
class TopicTaskCell:
    """One (topic, task) file: `records` are (0-based line number = upstream id, record) pairs."""

    topic: str
    task: str
    path: str
    records: list[tuple[int, Any]] = field(default_factory=list)


def topic_of(topic_name: str) -> str:
    """`金融 - A - B` -> `A - B` (upstream dataset_clean.py drops the root topic)."""
    parts = topic_name.split(" - ")
    return " - ".join(parts[1:] if parts[0] == "金融" and len(parts) > 1 else parts)


DATA_FILE = "OmniEval's questions (JSON Lines)"


def tree_cells(root: Path) -> Iterator[TopicTaskCell]:
    for path in sorted(root.rglob("*.jsonl")):
        parts = path.relative_to(root).with_suffix("").parts
        if len(parts) < 2:
            raise ConfigError(f"omnieval data {path}: expected <一级>/<二级>/<task>.jsonl under {root}")
        cell = TopicTaskCell(" - ".join(parts[:-1]), parts[-1], str(path))
        cell.records = list(given_values(path, DATA_FILE))
        yield cell


def flat_cells(path: Path) -> Iterator[TopicTaskCell]:
    """Split a flat file into cells in file order; ids count lines within each cell, as the tree
    that upstream's dataset_clean.py writes from it would."""
    cells: dict[tuple[str, str], TopicTaskCell] = {}
    for number, record in given_values(path, DATA_FILE):
        first = record[0] if isinstance(record, list) and record else record
        if not isinstance(first, dict) or "topic_name" not in first or "task_name" not in first:
            error = (
                record
                if isinstance(record, RecordError)
                else RecordError(
                    str(path), number + 1, "a flat OmniEval file needs topic_name and task_name in every record"
                )
            )
            yield TopicTaskCell("?", "?", str(path), [(number, error)])
            continue
        key = (topic_of(first["topic_name"]), first["task_name"])
        cell = cells.setdefault(key, TopicTaskCell(*key, str(path)))
        cell.records.append((len(cell.records), record))
    yield from cells.values()


def load_cells(path: Path) -> list[TopicTaskCell]:
    """All cells under `path` (folder tree or flat file), in upstream topic x task id order."""
    if path.is_dir():
        cells = list(tree_cells(path))
    elif path.is_file():
        cells = list(flat_cells(path))
    else:
        raise ConfigError(f"omnieval data {path}: no such file or folder")
    topic_rank = {t: i for i, t in enumerate(catalog.topics())}
    task_rank = {t: i for i, t in enumerate(catalog.tasks())}
    return sorted(
        cells,
        key=lambda c: (
            topic_rank.get(c.topic, len(topic_rank)),
            c.topic,
            task_rank.get(c.task, len(task_rank)),
            c.task,
        ),
    )

"""What a tracker is sent of a finished run, the same for every tracker: the run's identity and config, its
headline metrics (a flat summary and a table with their intervals), each task's per-sample table, and the run
folder's files. Read through the finished-run reader (`finished_run`): a folder that is no finished run, or has
an unreadable samples line, is refused in one line."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

from .._records import SampleRecord
from .._reports.results.finished_run import FinishedRun, finished_run
from .._storage.rundir import RunDir

HEADLINE_COLUMNS = ["task", "metric", "value", "ci95_low", "ci95_high", "n", "higher_is_better"]
SAMPLE_COLUMNS = ["id", "question", "prediction", "gold", "error"]  # then one column per score key
LOCK_FILE = "run.lock"  # the run's lock: nothing of the run's own


@dataclass(frozen=True)
class Table:
    columns: list[Any]  # names (Any: as the trackers' table types take them)
    rows: list[Any]  # a list of values per row, in the columns' order


class RunIdentity(TypedDict):
    """Which run a tracker logs: its folder, config hash, date, ragbench version and whether it is complete."""

    folder: str
    config_hash: str | None
    date: str | None
    complete: bool
    ragbench: str | None
    git_hash: str | None
    rescored_from: str | None


@dataclass(frozen=True)
class RunLog:
    run: FinishedRun

    @property
    def name(self) -> str:
        return self.run.path.resolve().name

    @property
    def tasks(self) -> list[str]:
        return list(self.run.results.counts)

    def identity(self) -> RunIdentity:
        """Which run this is: its folder, config hash, date, ragbench version and whether it is complete."""
        results = self.run.results
        return {
            "folder": str(self.run.path.resolve()),
            "config_hash": recorded.config_hash if (recorded := RunDir(self.run.path).record) else None,
            "date": results.date,
            "complete": results.complete,
            "ragbench": _text(results.versions.get("ragbench")),
            "git_hash": _text(results.versions.get("git_hash")),
            "rescored_from": results.rescored_from,
        }

    def config(self) -> dict[str, Any]:
        """The run's config as results.json holds it (system, model, tasks, options, the tasks' and metrics'
        configs), its identity under `run` and the package versions under `versions`."""
        return {**self.run.results.config, "run": self.identity(), "versions": self.run.results.versions}

    def summary(self) -> dict[str, float | int]:
        """`TASK/KEY` -> value for each headline key that has one, and `TASK/counts/NAME` -> each count."""
        results = self.run.results
        values: dict[str, float | int] = {
            f"{task}/{key}": value
            for task, keys in results.results.items()
            for key, value in keys.items()
            if value is not None
        }
        for task, counts in results.counts.items():
            values.update({f"{task}/counts/{name}": count for name, count in cast(dict[str, int], counts).items()})
        return values

    def headline(self) -> Table:
        """One row per task and key: value, 95% interval, n, and which way is better."""
        rows = []
        for task, keys in self.run.results.results.items():
            details = self.run.results.details.get(task, {})
            for key, value in keys.items():
                entry = details.get(key)
                low, high = (entry.get("ci95") if entry else None) or (None, None)
                n, better = (entry.get("n"), entry.get("higher_is_better")) if entry else (None, None)
                rows.append([task, key, value, low, high, n, better])
        return Table(HEADLINE_COLUMNS, rows)

    def samples(self, task: str) -> Table:
        """The task's examples: id, question, the prediction's answer, the gold (JSON), the error, then each
        score key the records hold, in the order first seen (a key an example lacks: None)."""
        scored = [(sample_row(record), record.scores) for record in self.run.records(task, why="its samples")]
        keys = list(dict.fromkeys(key for _, scores in scored for key in scores))
        return Table([*SAMPLE_COLUMNS, *keys], [row + [scores.get(key) for key in keys] for row, scores in scored])

    def files(self) -> Iterator[tuple[Path, str]]:
        """(path, name inside the folder) of each regular file of the run folder, in name order: the lock and
        symbolic links (which may lead out of the folder) left out."""
        root = self.run.path
        found = []
        for folder, _, names in os.walk(root):  # links to folders are not walked into
            found += [Path(folder, name) for name in names if name != LOCK_FILE or Path(folder) != root]
        for path in sorted(found):
            if path.is_file() and not path.is_symlink():
                yield path, path.relative_to(root).as_posix()


def sample_row(record: SampleRecord) -> list[Any]:
    gold = record.gold_references or record.gold  # the task's reading of the gold, else the gold as recorded
    return [record.id, record.question, record.answer, json.dumps(gold, ensure_ascii=False), record.error or ""]


def run_log(path: str | Path) -> RunLog:
    """The finished run at `path` (`ConfigError`, naming `ragbench log`, where it is none)."""
    return RunLog(finished_run(path, "log"))


def _text(value: object) -> str | None:
    """A version as run identity holds it: its text, None where results.json has none."""
    return None if value is None else str(value)

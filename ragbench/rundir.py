"""A run's folder: its config, the per-task sample files (also the checkpoint), results.json.

runs/<name>/
  run.json              the config and its hash; "finished": false until the run completes
  samples/<task>.jsonl  one line per example, appended as each finishes (the checkpoint), and
                        rewritten in data order when the run completes
  cache.sqlite          engine responses (unless --cache points elsewhere)
  results.json, report.md
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .errors import ConfigError


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, default=str)


class RunDir:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.samples_dir = self.path / "samples"
        self._handles: dict[str, Any] = {}

    def start(self, config: dict[str, Any], config_hash: str, resume: bool) -> None:
        """Create the folder; with `resume`, check that it holds a run of the same config."""
        meta_path = self.path / "run.json"
        if resume:
            if not meta_path.is_file():
                raise ConfigError(f"--resume: {self.path} holds no run to resume (no run.json); "
                                  "drop --resume to start one")
            previous = json.loads(meta_path.read_text(encoding="utf-8"))
            if previous.get("config_hash") != config_hash:
                raise ConfigError(f"--resume: {self.path} was run with a different configuration; "
                                  "use the same options, or a new --output")
        else:
            for stale in self.samples_dir.glob("*.jsonl") if self.samples_dir.is_dir() else ():
                stale.unlink()
            for name in ("results.json", "report.md"):
                (self.path / name).unlink(missing_ok=True)
        self.samples_dir.mkdir(parents=True, exist_ok=True)
        self._write_json("run.json", {"config": config, "config_hash": config_hash, "finished": False})

    def sample_path(self, task: str) -> Path:
        return self.samples_dir / f"{task}.jsonl"

    def finished_indices(self, task: str) -> set[int]:
        return {record["index"] for record in self.read_samples(task)}

    def read_samples(self, task: str) -> list[dict[str, Any]]:
        """Complete lines of the checkpoint (a line cut short by a crash is ignored)."""
        path = self.sample_path(task)
        if not path.is_file():
            return []
        records = []
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                try:
                    records.append(json.loads(line))
                except ValueError:
                    continue
        return records

    def append_sample(self, task: str, record: dict[str, Any]) -> None:
        handle = self._handles.get(task)
        if handle is None:
            handle = self._handles[task] = self.sample_path(task).open("a", encoding="utf-8")
        handle.write(_dump(record) + "\n")
        handle.flush()

    def finalize_samples(self, task: str) -> list[dict[str, Any]]:
        """Rewrite the task's samples in data order (one line per record index) and return them."""
        self.close()
        by_index = {record["index"]: record for record in self.read_samples(task)}
        records = [by_index[i] for i in sorted(by_index)]
        tmp = self.sample_path(task).with_suffix(".jsonl.tmp")
        tmp.write_text("".join(_dump(r) + "\n" for r in records), encoding="utf-8")
        os.replace(tmp, self.sample_path(task))
        return records

    def finish(self, results: dict[str, Any], report: str) -> None:
        self._write_json("results.json", results)
        (self.path / "report.md").write_text(report, encoding="utf-8")
        meta = json.loads((self.path / "run.json").read_text(encoding="utf-8"))
        meta["finished"] = True
        self._write_json("run.json", meta)

    def _write_json(self, name: str, data: dict[str, Any]) -> None:
        tmp = self.path / (name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, self.path / name)

    def close(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()

"""Outputs made elsewhere, scored as if this system had produced them (`ragbench score`).

The predictions file is JSONL, one `{"id": ..., "output": "<raw model text>"}` per example;
`docs` (the documents shown, in order: a list of objects; absent or null: not known) may be given for citation
and retrieval metrics, and `label` (a human judgement, e.g. CRAG's perfect/acceptable/missing/incorrect) for
metrics that read it. The task's own output post-processing is applied, exactly as for a live run. A folder is
read by the task's `prediction_records(folder)` (OmniEval: upstream's `*.pred.jsonl` inference files).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragbench.api import (ConfigError, Context, Document, Example, Prediction, RecordError, SampleRecord, System,
                          iter_jsonl, require)


class MissingPrediction(Exception):
    pass


class Recorded(System):
    name = "recorded"
    uses_llm = False

    def __init__(self, path: str) -> None:
        self.path = str(path)
        self.outputs: dict[str, dict[str, Any]] = {}
        self.file_errors: list[str] = []
        if Path(path).is_dir():  # a folder of a benchmark's own output files: read in `check`, by the task
            return
        try:
            records = list(iter_jsonl(path))
        except OSError as exc:
            raise ConfigError(f"predictions file {path}: {exc.strerror or exc}") from exc
        self.load(records)

    def check(self, task: Any) -> None:
        if not Path(self.path).is_dir():
            return
        records = task.prediction_records(Path(self.path))
        if records is None:
            raise ConfigError(f"--predictions {self.path} is a folder, but task {task.name} reads no prediction "
                              f"folders: pass a JSONL of {{\"id\", \"output\"}} records")
        self.outputs, self.file_errors = {}, []
        self.load(list(records))

    def load(self, records: list[tuple[int, Any]]) -> None:
        path = self.path
        for index, record in records:
            try:
                if isinstance(record, RecordError):
                    raise record
                example_id = str(require(record, "id", path, index, (str, int)))
                require(record, "output", path, index, str)
                docs = record.get("docs")
                if docs is not None and not (isinstance(docs, list) and all(isinstance(d, dict) for d in docs)):
                    raise RecordError(path, index + 1, 'expected a list of documents ({"id", "title", "text"} each, '
                                      f"in the order shown), got {json.dumps(docs)[:40]}", "docs")
                if example_id in self.outputs:
                    raise RecordError(path, index + 1, f"duplicate id {example_id!r}", "id")
                self.outputs[example_id] = record
            except RecordError as exc:
                self.file_errors.append(str(exc))

    async def run(self, example: Example, ctx: Context) -> Prediction:
        record = self.outputs.get(example.id)
        if record is None:
            raise MissingPrediction(f"{self.path} has no prediction for id {example.id!r}")
        docs = [Document.from_dict(d) for d in record.get("docs") or []]
        output = record["output"]
        answer = ctx.task.postprocess(output)
        extras = {"label": record["label"]} if "label" in record else {}
        if record.get("docs") is None:  # which documents were shown is unknown (not: none were shown)
            extras["docs_unknown"] = True
        return Prediction(example_id=example.id, answer=answer, raw_output=output, docs=docs,
                          citations=ctx.task.citations(answer), extras=extras)

    def report(self, samples: list[SampleRecord], complete_data: bool) -> dict[str, Any]:
        """Bad lines of the file and (when the whole task was read) ids not in the task's data."""
        errors = list(self.file_errors)
        if complete_data:
            seen_ids = {s.id for s in samples if s.id is not None}
            errors += [f"{self.path}: unknown id {example_id!r} (not in the task's data)"
                       for example_id in self.outputs if example_id not in seen_ids]
        return {"predictions_file": self.path, "errors": errors}

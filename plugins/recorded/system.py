"""Outputs made elsewhere, scored as if this system had produced them (`ragbench score`).

The predictions file is JSONL, one `{"id": ..., "output": "<raw model text>"}` per example;
`docs` (the documents shown, in order: a list of objects; absent or null: not known) may be given for citation
and retrieval metrics, and `label` (a human judgement, e.g. CRAG's perfect/acceptable/missing/incorrect) and
`supporting_facts` (HotpotQA's [[title, sentence index], ...]) for metrics that read them, and `extras` (an
object: what an agent did, e.g. the docids a BrowseComp-Plus agent retrieved, which a task's reader of its own
run files sets) for the prediction's extras; a line with an `error` (a run's own sample of a failed example)
fails that example again.
The task's own output post-processing is applied, exactly as for a live run. A folder is
read by the task's `prediction_records(folder)` (OmniEval: upstream's `*.pred.jsonl` inference files), and a file by
its `prediction_file_records(file)` where it has one (CRAG-MM: upstream's response.jsonl), whose items may also be
notes (a string: what the task's own tools would say of the folder, TREC RAG's topics no line answers), listed in
the report beside the file's errors without failing the run; a record of the task's may give the `answer` as its
benchmark's evaluation scores it, which is then not post-processed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragbench.api import (
    ConfigError,
    Context,
    Document,
    Example,
    Prediction,
    RecordError,
    SampleRecord,
    System,
    SystemDeclaration,
)
from ragbench.api.data import JsonObject, iter_jsonl, require
from ragbench.api.protocols import PredictionFile, PredictionRecords

JSON_KINDS = {
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
    list: "a list",
    dict: "an object",
}


class MissingPrediction(Exception):
    pass


class UnreadablePrediction(Exception):
    """The example's line is in the file but cannot be scored (its output is not a string, its docs cannot be
    read): the example fails saying why, not as one without a prediction."""


class FailedPrediction(Exception):
    """The line records that its example failed where the outputs were made (a run's own sample of a failed
    example has `"error"` and an empty output): it fails here too, never scored as an empty answer."""


def shown_documents(record: dict[str, Any], path: str, index: int, text_required: bool) -> list[Document] | None:
    """The record's `docs` as Documents, or None where it has none or null (which were shown is unknown); a
    `docs` that is not a list of objects with a text (`text_required`: a JSONL line's; a benchmark's own output
    files, read by its task, may hold the text elsewhere) is a bad line, not documents without text."""
    docs = record.get("docs")
    if docs is None:
        return None

    def readable(doc: Any) -> bool:
        return isinstance(doc, dict) and (isinstance(doc.get("text"), str) or not text_required and "text" not in doc)

    if not isinstance(docs, list) or not all(readable(doc) for doc in docs):
        raise RecordError(
            path, index + 1, 'expected a list of documents {"id", "title", "text"}, each with its text', "docs"
        )
    try:
        return [Document.from_dict(doc) for doc in docs]
    except (TypeError, ValueError) as exc:  # a score that is no number
        raise RecordError(path, index + 1, f"a document that cannot be read ({exc})", "docs") from None


class Recorded(System):
    name = "recorded"
    declares = SystemDeclaration(
        prompt_style="recorded",  # outputs made elsewhere, with prompts ragbench never saw
        uses_llm=False,
    )

    def __init__(self, path: str) -> None:
        self.path = str(path)
        self.outputs: dict[str, dict[str, Any]] = {}
        self._docs: dict[str, list[Document] | None] = {}
        self.file_errors: list[str] = []
        self.notes: list[str] = []
        self._unreadable: dict[str, str] = {}  # id -> why its line cannot be scored
        self._scored_as: dict[str, str] = {}  # id -> the answer a task's reader gives as its benchmark scores it
        if Path(path).is_dir():  # a folder of a benchmark's own output files: read in `check`, by the task
            return
        try:
            records = list(iter_jsonl(path))
        except OSError as exc:
            raise ConfigError(f"predictions file {path}: {exc.strerror or exc}") from exc
        self.load(records, text_required=True)

    def check(self, task: Any) -> None:
        path = Path(self.path)
        if not path.is_dir():
            own = task.prediction_file_records(path) if isinstance(task, PredictionFile) else None
            if own is not None:  # the benchmark's own file, read by its task
                self.reload(list(own))
            return
        if not isinstance(task, PredictionRecords):
            raise ConfigError(
                f"--predictions {self.path} is a folder, but task {task.name} reads no prediction "
                f'folders: pass a JSONL of {{"id", "output"}} records'
            )
        self.reload(list(task.prediction_records(path)))

    def reload(self, records: list[tuple[int, Any]]) -> None:
        """The records a task's reader made of the benchmark's own files, in place of any read before."""
        self.outputs, self._docs, self.file_errors, self.notes, self._unreadable = {}, {}, [], [], {}
        self._scored_as = {}
        self.load(records, text_required=False)

    def load(self, records: list[tuple[int, Any]], text_required: bool) -> None:
        path = self.path
        for index, record in records:
            if isinstance(record, str):
                self.notes.append(record)
                continue
            example_id = None
            try:
                if isinstance(record, RecordError):
                    raise record
                example_id = str(require(record, "id", path, index, (str, int)))
                output = require(record, "output", path, index)
                if not isinstance(output, str):
                    raise RecordError(
                        path,
                        index + 1,
                        f"the output of id {example_id!r} is "
                        f"{JSON_KINDS[type(output)]}, expected a string (the raw model text)",
                        "output",
                    )
                if not isinstance(record.get("extras") or {}, dict):
                    raise RecordError(path, index + 1, f"the extras of id {example_id!r} are not an object", "extras")
                if example_id in self.outputs:
                    raise RecordError(path, index + 1, f"duplicate id {example_id!r}", "id")
                self._docs[example_id] = shown_documents(record, path, index, text_required)
                self.outputs[example_id] = record
                if not text_required and isinstance(record.get("answer"), str):  # the task's reader's: as scored
                    self._scored_as[example_id] = record["answer"]
            except RecordError as exc:
                self.file_errors.append(str(exc))
                if example_id is not None:
                    self._unreadable.setdefault(example_id, str(exc))

    async def run(self, example: Example, ctx: Context) -> Prediction:
        record = self.outputs.get(example.id)
        if record is None and example.id in self._unreadable:
            raise UnreadablePrediction(self._unreadable[example.id])
        if record is None:
            raise MissingPrediction(f"{self.path} has no prediction for id {example.id!r}")
        if record.get("error") is not None:
            raise FailedPrediction(f"{self.path} records that example {example.id!r} failed: {record['error']}")
        docs = self._docs[example.id]
        output = record["output"]
        scored_as = self._scored_as.get(example.id)
        answer = scored_as if scored_as is not None else ctx.task.prompting.postprocess(output)
        extras: JsonObject = {key: record[key] for key in ("label", "supporting_facts") if key in record}
        extras.update(record.get("extras") or {})
        if docs is None:  # which documents were shown is unknown (not: none were shown)
            extras[Prediction.DOCS_UNKNOWN] = True
        return Prediction(
            example_id=example.id,
            answer=answer,
            raw_output=output,
            docs=docs or [],
            citations=ctx.task.prompting.citations(answer),
            extras=extras,
        )

    def report(self, samples: list[SampleRecord], complete_data: bool) -> JsonObject:
        """Bad lines of the file and (when the whole task was read) ids not in the task's data; the task's notes."""
        errors = list(self.file_errors)
        if complete_data:
            seen_ids = {s.id for s in samples if s.id is not None}
            errors += [
                f"{self.path}: unknown id {example_id!r} (not in the task's data)"
                for example_id in self.outputs
                if example_id not in seen_ids
            ]
        report: JsonObject = {"predictions_file": self.path, "errors": [*errors]}
        if self.notes:
            report["notes"] = [*self.notes]
        return report

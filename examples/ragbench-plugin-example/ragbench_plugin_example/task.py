"""`trivia_tf`: true/false trivia statements, each with a few evidence passages.

Data format (JSONL, one object per line):
    {"qid": "tf-001", "statement": "...", "truth": true,
     "evidence": [{"title": "...", "text": "..."}]}      # evidence is optional
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, Document, Example, RecordError, Task, TaskPrompting, TaskScoring
from ragbench.api.data import iter_jsonl, require

INSTRUCTION = "Is the following statement true or false? Answer with one word: true or false."


class TriviaTFPrompting(TaskPrompting):
    """The task's prompting, followed by the built-in closed_book and vanilla systems."""

    answer_format = "label"

    def build_prompt(self, example: Example, docs: list[Document] | None = None, **options: Any) -> str:
        evidence = ""
        if docs:
            evidence = (
                "Evidence:\n" + "\n".join(f"[{i}] {doc.title}\n{doc.text}" for i, doc in enumerate(docs, 1)) + "\n\n"
            )
        return f"{INSTRUCTION}\n\n{evidence}Statement: {example.question}\nAnswer:"

    def postprocess(self, text: str) -> str:
        """The first non-empty line of the output, stripped."""
        lines = [line.strip() for line in text.strip().splitlines()]
        return lines[0] if lines else ""


class TriviaTF(Task):
    name = "trivia_tf"
    # Our own metric first; built-in metrics work too because gold["answers"] is filled.
    # gold["truth"] is a true/false verdict
    scoring = TaskScoring(metrics=("verdict_accuracy", "match_normalized"), gold_fields=("answers", "label"))
    prompting = TriviaTFPrompting()
    own_documents = True  # each statement comes with its evidence passages

    def __init__(self, data_path: str | Path | None = None) -> None:
        if data_path is None:  # the copy shipped as package data
            data_path = resources.files(__package__).joinpath("data", "trivia_tf.jsonl")
        super().__init__(data_path)

    # --- data -------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Called before the run starts: a missing file stops it with a one-line error."""
        if not Path(self.data_path).is_file():
            raise ConfigError(f"task {self.name}: data file {self.data_path} not found")

    def examples(self) -> Iterator[Example | RecordError]:
        path = self.data_path
        for index, record in iter_jsonl(path):
            if isinstance(record, RecordError):  # not JSON / not an object: reported, run goes on
                yield record
                continue
            try:
                example = self.parse(record, path, index)
            except RecordError as exc:  # missing or mistyped field
                yield exc
                continue
            yield example

    def parse(self, record: dict[str, Any], path: Path, index: int) -> Example:
        qid = require(record, "qid", path, index, (str, int))
        statement = require(record, "statement", path, index, str)
        truth = require(record, "truth", path, index, bool)
        evidence = record.get("evidence", [])
        if not isinstance(evidence, list) or not all(
            isinstance(e, dict) and isinstance(e.get("text"), str) for e in evidence
        ):
            raise RecordError(str(path), index + 1, 'expected a list of {"title", "text"}', "evidence")
        docs = [
            Document(id=f"{qid}-{i}", title=str(e.get("title", "")), text=e["text"]) for i, e in enumerate(evidence)
        ]
        answer = "true" if truth else "false"
        return Example(
            id=str(qid), question=statement, gold={"truth": truth, "answers": [answer]}, docs=docs, index=index
        )

"""The `argue_report` task: ARGUE report requests (NeuCLIR 2024 report generation, RAGTIME), a report each,
judged by `auto_argue` against the request's nuggets. `--data argue_report=FOLDER` (data.py); a folder of report
files scores as predictions (`ragbench score --predictions FOLDER`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, Document, Example, Prompt, RecordError, Task, TaskPrompting, TaskScoring
from ragbench.api.data import JsonObject, given_values

from .data import DOCS, NUGGETS, REQUESTS, read_banks, read_docs, read_requests, report_record

REPORT_TOKENS = 2048  # a 2,000-character report with room to spare


class RequestPrompting(TaskPrompting):
    """The request as a report writer reads it: title, requester, problem statement and length limit; documents
    shown follow, numbered [n] for the report to cite."""

    answer_format = "long"

    def build_prompt(self, example: Example, docs: list[Document] | None = None, **options: Any) -> Prompt:
        meta = example.meta
        prompt = f"{meta['title']}\n\nRequester: {meta['background']}\n\n{example.question}".strip()
        if meta.get("limit"):
            prompt += f"\n\nWrite a report of at most {meta['limit']} characters, citing its sources as [n]."
        if docs:
            prompt += "\n\nSources:\n" + "\n".join(f"[{n}] {doc.title}: {doc.text}" for n, doc in enumerate(docs, 1))
        return prompt


class ArgueReport(Task):
    name = "argue_report"
    prompting = RequestPrompting()
    scoring = TaskScoring(gold_fields=("argue_nuggets",), metrics=("auto_argue",))
    own_documents = False

    def system_defaults(self) -> dict[str, object]:
        return {"max_tokens": REPORT_TOKENS}

    def _folder(self) -> Path:
        if self.data_path is None:
            raise ConfigError(f"task {self.name}: pass --data {self.name}=FOLDER (with {REQUESTS} and {NUGGETS}/)")
        if not (self.data_path / REQUESTS).exists():  # what is there but no file: refused by its reader (given_files)
            raise ConfigError(f"task {self.name}: {self.data_path / REQUESTS} not found (the report requests)")
        return self.data_path

    def prepare(self) -> None:
        self.path = self._folder() / REQUESTS

    def examples(self) -> Iterator[Example | RecordError]:
        folder = self._folder()
        banks = read_banks(folder / NUGGETS)
        index = 0
        for number, request in enumerate(read_requests(folder / REQUESTS), start=1):
            if isinstance(request, RecordError):
                yield request
                continue
            request_id = str(request["request_id"])
            if request_id not in banks:
                yield RecordError(str(folder / REQUESTS), number, f"request {request_id} has no nugget bank")
                continue
            meta = {
                "title": str(request.get("title", "")),
                "background": str(request.get("background", "")),
                "limit": request.get("limit"),
            }
            gold = {"argue_nuggets": banks[request_id]}
            yield Example(id=request_id, question=str(request["problem_statement"]), gold=gold, meta=meta, index=index)
            index += 1

    def prediction_records(self, folder: Path) -> Iterator[tuple[int, JsonObject | RecordError | str]]:
        """Every line of the folder's *.jsonl report files as a `ragbench score` record (data.report_record)."""
        docs = read_docs(self._folder() / DOCS)
        index = 0
        for path in sorted(folder.glob("*.jsonl")):
            for line, value in given_values(path, "a report file (JSONL)"):
                try:  # a RecordError: not UTF-8, not JSON, nested too deeply
                    yield index, value if isinstance(value, RecordError) else report_record(value, docs)
                except ValueError as exc:
                    yield index, RecordError(str(path), line + 1, str(exc))
                index += 1

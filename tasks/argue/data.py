"""An ARGUE data folder as the tracks lay their files out (argue-viz's example assets; hltcoe/rag-run-validator's
report format):

- `requests.jsonl`: the report requests, `{"request_id", "title", "background", "problem_statement", "limit",
  "collection_ids"}` per line (`limit`: the report's length limit in characters);
- `nuggets/`: one v3 nugget bank per request (`*.json`, matched by its `query_id`);
- `docs.jsonl` (optional): the texts of the documents reports cite, `{"id" (or "doc_id"), "title", "text"}`,
  for scoring report files, which name their documents only.

A report file line: `{"metadata": {"topic_id" (or "request_id"), "run_id", ...}, "responses": [{"text",
"citations"}], "references"}`, each response a sentence and its citations the docids it cites (a list, or an
object docid -> score).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, RecordError
from ragbench.api.data import JsonObject, built_records, given_json, given_jsonl, require

from .nuggets import ArgueNugget, read_bank

END = re.compile(r"[.!?]+$")  # a sentence's closing punctuation: its markers go before it, as ALCE's answers cite
REQUESTS = "requests.jsonl"
NUGGETS = "nuggets"
DOCS = "docs.jsonl"


def read_requests(path: Path) -> Iterator[JsonObject | RecordError]:
    def request(record: JsonObject, index: int) -> JsonObject:
        require(record, "request_id", path, index, (str, int))
        require(record, "problem_statement", path, index, str)
        return record

    return built_records(given_jsonl(path, "ARGUE's report requests (JSONL)"), request)


def read_banks(folder: Path) -> dict[str, list[ArgueNugget]]:
    """query_id -> nuggets of every bank in the folder; a bank that does not read is a ConfigError naming it."""
    if not folder.is_dir():
        raise ConfigError(f"ARGUE nuggets folder {folder} not found: --data names a folder holding {NUGGETS}/")
    banks = {}
    for path in sorted(folder.glob("*.json")):
        try:
            query_id, nuggets = read_bank(given_json(path, "a v3 nugget bank (JSON)"))
        except ValueError as exc:  # BankError, or a shape read_bank did not foresee
            raise ConfigError(f"nugget bank {path} is not a v3 nugget bank: {exc}") from exc
        banks[query_id] = nuggets
    return banks


def read_docs(path: Path) -> dict[str, JsonObject]:
    """docid -> {"id", "title", "text"} of the docs file (none without one)."""
    docs: dict[str, JsonObject] = {}
    if not path.is_file():
        return docs
    for index, record in given_jsonl(path, "the documents reports cite (JSONL)"):
        if isinstance(record, RecordError):
            raise ConfigError(str(record))
        doc_id = record.get("id", record.get("doc_id"))
        if not isinstance(doc_id, str):
            raise ConfigError(f"{path}:{index + 1}: a document without an id string")
        docs[doc_id] = {"id": doc_id, "title": str(record.get("title", "")), "text": str(record.get("text", ""))}
    return docs


def report_record(line: Any, docs: dict[str, JsonObject]) -> dict[str, Any]:
    """One report line as a `ragbench score` record: its sentences joined, each with "[n]" markers before its
    closing punctuation for the docids it cites (numbered in the order first cited), the cited documents as its
    docs."""
    if not isinstance(line, dict) or not isinstance(line.get("responses"), list):
        raise ValueError('expected {"metadata", "responses", "references"}')
    given = line.get("metadata")
    metadata: dict[str, Any] = given if isinstance(given, dict) else {}
    topic = metadata.get("topic_id", metadata.get("request_id", line.get("request_id")))
    if topic is None:
        raise ValueError('no "metadata": {"topic_id"} (or "request_id")')
    order: list[str] = []
    parts = []
    for response in line["responses"]:
        if not isinstance(response, dict) or not isinstance(response.get("text"), str):
            raise ValueError('a response is not {"text", "citations"}')
        cited = [str(doc) for doc in response.get("citations") or []]
        order += [doc for doc in cited if doc not in order]
        marks = "".join(f"[{order.index(doc) + 1}]" for doc in dict.fromkeys(cited))
        text = response["text"].strip()
        end = END.search(text)
        body, stop = (text[: end.start()], end.group()) if end else (text, "")
        parts.append(f"{body} {marks}{stop}" if marks else text)
    shown = [docs.get(doc, {"id": doc, "title": "", "text": ""}) for doc in order]
    return {"id": str(topic), "output": " ".join(parts), "docs": shown}

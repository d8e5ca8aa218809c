"""BrowseComp-Plus's released files, as its scripts write and read them.

- The decrypted queries (scripts_build_index/decrypt_dataset.py's JSONL, one Tevatron/browsecomp-plus row
  a line): `query_id`, `query`, `answer`, and `evidence_docs`, `gold_docs`, `negative_docs`, each a list of
  {"docid", "text", "url"}.
- The qrels of topics-qrels/ (qrel_evidence.txt, qrel_golds.txt): TREC lines `query_id Q0 docid 1`, read as
  evaluate_run.py's load_qrel_data reads them (a line not of 4 fields is refused; a docid once per query here).
The corpus (Tevatron/browsecomp-plus-corpus: rows {"docid", "text", "url"}) is not read here: its save_to_disk
folder (or a JSONL of its rows) is a retrieval corpus like any other (`ragbench index build --corpus FOLDER`;
`docid` is its id).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, RecordError
from ragbench.api.data import given_jsonl, given_text_lines

QUERIES = "data/browsecomp_plus_decrypted.jsonl"  # where the README's decrypt command writes them
EVIDENCE_QRELS = "topics-qrels/qrel_evidence.txt"
GOLD_QRELS = "topics-qrels/qrel_golds.txt"
DOC_LISTS = ("evidence_docs", "gold_docs")


def read_qrels(path: Path) -> dict[str, list[str]]:
    """query id -> its relevant docids in file order, each once (load_qrel_data's lists, which can repeat one)."""
    qrels: dict[str, list[str]] = {}
    for number, line in given_text_lines(path, "qrels (query_id Q0 docid relevance)"):
        parts = line.split()
        if len(parts) != 4:
            raise ConfigError(f"{path}:{number}: expected 4 fields (query_id Q0 docid relevance), got {len(parts)}")
        docids = qrels.setdefault(parts[0], [])
        if parts[2] not in docids:
            docids.append(parts[2])
    return qrels


def doc_ids(record: Mapping[str, object], field: str) -> list[str]:
    """The docids of one of a query's document lists, each once, in order."""
    docs = record.get(field) or []
    if not isinstance(docs, list) or not all(isinstance(doc, dict) and "docid" in doc for doc in docs):
        raise ValueError(f'"{field}" is not a list of {{"docid", "text", "url"}}')
    return list(dict.fromkeys(str(doc["docid"]) for doc in docs))


def read_queries(path: Path) -> Iterator[tuple[int, dict[str, Any] | RecordError]]:
    """(line, query) of the decrypted JSONL: query_id, query, answer and the evidence and gold docids; a line
    missing one is a RecordError naming it."""
    for index, item in given_jsonl(path, "BrowseComp-Plus's decrypted queries (JSONL)"):
        if isinstance(item, RecordError):
            yield index + 1, item
            continue
        missing = [key for key in ("query_id", "query", "answer") if not isinstance(item.get(key), (str, int))]
        if missing:
            yield index + 1, RecordError(str(path), index + 1, f"no {', '.join(missing)}", missing[0])
            continue
        try:
            docs = {field: doc_ids(item, field) for field in DOC_LISTS}
        except ValueError as exc:
            yield index + 1, RecordError(str(path), index + 1, str(exc))
            continue
        yield (
            index + 1,
            {"query_id": str(item["query_id"]), "query": str(item["query"]), "answer": str(item["answer"]), **docs},
        )

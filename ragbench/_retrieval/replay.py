"""`replay`: answers every search from a JSONL of recorded searches, so a multi-step run (LLatrieval's
missing-info queries, Self-RAG's adaptive retrieval, SMART's per-intent searches) re-executes offline
with no index, encoder or corpus at hand.

    --retriever replay --retriever-arg file=runs/X/calls/retrieval.jsonl [--retriever-arg corpus=F | index=DIR]

One search per line: {"query": ..., "ids": [...], "scores"?: [...], "k"?: n, "docs"?: [{id, title, text}],
"example"?: id} (the format every run writes to calls/retrieval.jsonl). A search for (query, k) takes the
first line with that query and that k, else the first with that query and a larger k (its first k hits),
else the first with that query and no k; a line with an "example" (a search among that example's own
documents) answers only that example. A hit's document comes from the line's "docs", else the
first line carrying its id (a run carries each document once), else the example's own documents,
else the `corpus` file or the `index` folder's passages, looked up by id.
A query that was never recorded is an error naming the nearest recorded query. Searches are traced
under the recorded retriever's name (when the file has one), so a replayed trace equals the original.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from .._errors import ConfigError, RecordError
from .._storage.given_files import given_jsonl
from .._types import Document, Example
from .._values.json_values import JsonObject
from .base import RetrievalError, Retriever
from .provided import ProvidedRetriever


class RecordedSearch(TypedDict, total=False):
    """A line of a recording of searches (calls/retrieval.jsonl, ragbench._replay.recording): a query's hits by
    id and score, the documents not carried by an earlier line, and the example whose own documents it searched."""

    retriever: str
    query: str
    k: int
    ids: list[str | None]
    scores: list[float | None]
    example: str
    docs: list[JsonObject]


class ReplayRetriever(Retriever):
    name = "replay"
    max_batch_size = 4096

    def __init__(self, file: str | None = None, corpus: str | None = None, index: str | None = None) -> None:
        if not file:
            raise ConfigError(
                "retriever replay: pass --retriever-arg file=PATH (a JSONL of recorded searches, "
                "e.g. runs/NAME/calls/retrieval.jsonl)"
            )
        self.path = Path(file)
        if not self.path.exists():  # what is there but no file: refused as it is opened (given_jsonl)
            raise ConfigError(f"retriever replay: file not found: {self.path}")
        self.by_query: dict[str, list[RecordedSearch]] = {}
        self.unreadable = 0  # lines that are not JSON (a recording cut short by a kill): skipped
        self.carried: dict[str, JsonObject] = {}  # a document by id, as the first line carrying it has it
        for line, record in given_jsonl(self.path, "a JSONL of recorded searches (calls/retrieval.jsonl)"):
            if isinstance(record, RecordError):
                self.unreadable += 1
                continue
            if not isinstance(record.get("query"), str) or not isinstance(record.get("ids"), list):
                raise ConfigError(
                    f"{self.path}:{line + 1}: not a recorded search; expected "
                    '{"query": "...", "ids": [...], "scores"?, "k"?, "docs"?}'
                )
            self.by_query.setdefault(record["query"], []).append(record)
            for doc in record.get("docs") or ():
                if doc.get("id") is not None:
                    self.carried.setdefault(str(doc["id"]), doc)
        self.corpus_path, self.index_path = corpus, index
        self._lookup: dict[str, Document] | None = None
        recorded = {r.get("retriever") for records in self.by_query.values() for r in records}
        traced = next(iter(recorded)) if len(recorded) == 1 else None
        if isinstance(traced, str):
            self.name = traced  # type: ignore[misc]  # this retriever's name: the one the original run traced
        self.fixed_documents = self.name == ProvidedRetriever.name

    def metadata(self) -> JsonObject:
        return {
            "retriever": "replay",
            "replays": self.name,
            "file": str(self.path),
            "searches": sum(map(len, self.by_query.values())),
            "unreadable_lines": self.unreadable,
        }

    def contents(self) -> JsonObject:
        from .corpus.identity import file_sha256

        return {"file_sha256": file_sha256(self.path)}  # a recording changed between attempts answers otherwise

    def for_example(self, example: Example) -> Retriever:
        return _ExampleReplay(self, {doc.id: doc for doc in example.docs if doc.id is not None}, example.id)

    def search(self, queries: list[str], k: int) -> list[list[Document]]:
        return [self.answer(query, k, {}) for query in queries]

    def answer(self, query: str, k: int, own: dict[str, Document], example: str | None = None) -> list[Document]:
        record = self.record_for(query, k, example)
        ids = record["ids"][:k]
        scores = list(record.get("scores") or [None] * len(record["ids"]))[:k]
        carried = [Document.from_dict(d) for d in record.get("docs") or []]
        by_id = {doc.id: doc for doc in carried}
        docs = []
        for position, (doc_id, score) in enumerate(zip(ids, scores)):
            earlier = self.carried.get(str(doc_id))  # a run carries each document once (ragbench._replay.recording)
            doc = (
                carried[position]
                if position < len(carried) and carried[position].id == doc_id
                else by_id.get(doc_id)
                or (Document.from_dict(earlier) if earlier is not None else None)
                or own.get(str(doc_id))
                or self.stored(doc_id, query)
            )
            docs.append(
                Document(
                    id=doc.id,
                    title=doc.title,
                    text=doc.text,
                    url=doc.url,
                    score=score if score is not None else doc.score,
                    metadata=dict(doc.metadata),
                )
            )
        return docs

    def record_for(self, query: str, k: int, example: str | None = None) -> RecordedSearch:
        records = [r for r in self.by_query.get(query) or () if r.get("example", example) == example]
        if not records and query in self.by_query:
            raise RetrievalError(
                f"replay miss in {self.path}: {json.dumps(query[:300], ensure_ascii=False)} was "
                f"recorded among other examples' documents, not example {example}'s"
            )
        if not records:
            nearest = difflib.get_close_matches(query, list(self.by_query), n=1, cutoff=0.0)
            shown = json.dumps(nearest[0][:300], ensure_ascii=False) if nearest else "none"
            raise RetrievalError(
                f"replay miss in {self.path}: no recorded search for "
                f"{json.dumps(query[:300], ensure_ascii=False)}; nearest recorded query: {shown}"
            )
        accepts: tuple[Callable[[RecordedSearch], bool], ...] = (
            lambda r: r.get("k") == k,
            lambda r: (r.get("k") or 0) > k,
            lambda r: r.get("k") is None,
        )
        for accept in accepts:
            match = next((r for r in records if accept(r)), None)
            if match is not None:
                return match
        recorded = sorted({r.get("k") for r in records}, key=str)
        raise RetrievalError(
            f"replay miss in {self.path}: {json.dumps(query[:300], ensure_ascii=False)} was "
            f"recorded with k={recorded}, asked k={k}"
        )

    def stored(self, doc_id: object, query: str) -> Document:
        """A document not carried by its line: from the corpus file or the index's passage store."""
        if self._lookup is None:
            self._lookup = self._load_lookup()
        doc = self._lookup.get(str(doc_id))
        if doc is None:
            raise RetrievalError(
                f"replay: document {doc_id!r} (for {json.dumps(query[:120], ensure_ascii=False)}) "
                "is not in the recorded line, the example's documents"
                + (
                    ", the corpus or the index"
                    if self.corpus_path or self.index_path
                    else "; pass --retriever-arg corpus=FILE or index=DIR"
                )
            )
        return doc

    def _load_lookup(self) -> dict[str, Document]:
        if self.corpus_path:
            from .corpus.readers import read_corpus

            return {str(doc.id): doc for doc in read_corpus(self.corpus_path) if isinstance(doc, Document)}
        if self.index_path:
            from .index.docstore import DocStore

            store = DocStore(Path(self.index_path))
            try:
                return {str(doc.id): doc for doc in (store.get(i) for i in range(len(store)))}
            finally:
                store.close()
        return {}


class _ExampleReplay(Retriever):
    """The replay bound to one example, whose own documents answer ids the lines do not carry."""

    def __init__(self, replay: ReplayRetriever, own: dict[str, Document], example: str) -> None:
        self.replay, self.own, self.example = replay, own, example
        self.name = replay.name  # type: ignore[misc]
        self.fixed_documents = replay.fixed_documents

    def search(self, queries: list[str], k: int) -> list[list[Document]]:
        return [self.replay.answer(query, k, self.own, self.example) for query in queries]

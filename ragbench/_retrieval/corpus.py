"""Streaming readers for retrieval corpora: one passage at a time, never the whole file.

- DPR `psgs_w100.tsv`: a header `id<TAB>text<TAB>title`, then one passage per row, the text
  quoted CSV-style (`"..."`, inner quotes doubled). Read with `csv.reader(delimiter="\\t")` as
  ALCE retrieval.py and LLatrieval Iterative_retrieval.py do.
- JSONL, one passage per line: `{"id", "title", "contents"}` (pyserini's, OmniEval's: contents
  without the title), `{"id", "title", "text"}` (BEIR's `"_id"` and BrowseComp-Plus's `"docid"` are accepted for `"id"`), or FlashRAG's
  `{"id", "contents"}` whose first line is the title (`flashrag_passage`); `"url"` is kept, and so are
  `"wikipedia_id"` (in the metadata: KILT's retrieval metrics score the pages passages are from) and a
  `"metadata"` object's keys (in the metadata: e.g. MultiHop-RAG's `published_at` and `source`, which its
  prompt shows).

A bad row is yielded as a `RecordError` (file, line, field) and the stream goes on.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._errors import ConfigError, RecordError
from .._storage.csv_fields import large_fields
from .._storage.jsonl import iter_jsonl
from .._types import Document

DPR_COLUMNS = ("id", "text", "title")
_NOT_UTF8 = re.compile("[\udc80-\udcff]")
FORMATS = {".tsv": "dpr_tsv", ".jsonl": "jsonl"}
TITLE_LINE = "title_line"  # Document.metadata: a FlashRAG passage's first line of `contents`, as written
PAGE_ID = "wikipedia_id"  # Document.metadata: the Wikipedia page a passage is from (KILT's page-level retrieval)
ID_FIELDS = (
    "id",
    "_id",
    "docid",
)  # a passage's id, by the first of these a line has (ragbench's, BEIR's, BrowseComp-Plus's)
METADATA = "metadata"  # a JSONL line's object of other values kept in Document.metadata


def corpus_format(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ConfigError(
            f"corpus {path}: unknown format '{path.suffix}'; expected .tsv (DPR psgs_w100: "
            "id, text, title) or .jsonl ({id, title, contents} or {id, title, text})"
        )
    return fmt


def read_corpus(path: str | Path) -> Iterator[Document | RecordError]:
    """Every passage of `path` in file order (format from the suffix)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"corpus {path} not found; pass --corpus with an existing .tsv or .jsonl file")
    reader = read_dpr_tsv if corpus_format(path) == "dpr_tsv" else read_jsonl_corpus
    return reader(path)


def read_dpr_tsv(path: Path) -> Iterator[Document | RecordError]:
    # bytes that are not UTF-8 come through as surrogates, so the row they are in is reported, not the file;
    # utf-8-sig: a BOM (a file saved by Excel or Notepad) made the header a passage with id "\ufeffid"
    with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        rows = csv.reader(handle, delimiter="\t")
        columns = {name: i for i, name in enumerate(DPR_COLUMNS)}
        first = True
        while True:
            try:
                with large_fields():  # a runaway quote would otherwise end the stream at csv's 128 KiB limit
                    row = next(rows)
            except StopIteration:
                return
            except csv.Error as exc:
                yield RecordError(str(path), rows.line_num, f"unreadable TSV row ({exc})")
                continue
            if first:
                first = False
                if set(DPR_COLUMNS) <= set(row):  # the header (DPR's loaders skip it the same way)
                    columns = {name: row.index(name) for name in DPR_COLUMNS}
                    continue
            bad = next((match for field in row if (match := _NOT_UTF8.search(field))), None)
            if bad is not None:
                byte = ord(bad.group()) - 0xDC00
                yield RecordError(str(path), rows.line_num, f"not UTF-8 (byte 0x{byte:02x}); save the file as UTF-8")
                continue
            if len(row) != 3:
                yield RecordError(
                    str(path), rows.line_num, f"expected 3 tab-separated fields (id, text, title), got {len(row)}"
                )
                continue
            if not row[columns["id"]]:
                yield RecordError(str(path), rows.line_num, "empty passage id", "id")
                continue
            yield Document(id=row[columns["id"]], title=row[columns["title"]], text=row[columns["text"]])


def read_jsonl_corpus(path: Path) -> Iterator[Document | RecordError]:
    for index, record in iter_jsonl(path):
        if isinstance(record, RecordError):
            yield record
            continue
        try:
            yield jsonl_document(record, str(path), index + 1)
        except RecordError as exc:
            yield exc


def jsonl_document(record: dict[str, Any], path: str, line: int) -> Document:
    doc_id = next((record[field] for field in ID_FIELDS if field in record), None)
    if doc_id is None or doc_id == "":
        raise RecordError(path, line, "missing passage id", "id")
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):  # 1.0 would be "1.0", never qrels' "1"
        raise RecordError(path, line, f"passage id {doc_id!r}: expected a string or a whole number", "id")
    field = "contents" if "contents" in record else "text"
    text = record.get(field)
    if not isinstance(text, str):
        problem = (
            "missing field (expected 'contents' or 'text')"
            if text is None
            else f"expected a string, got {type(text).__name__}"
        )
        raise RecordError(path, line, problem, field)
    url = record.get("url")
    url = url if isinstance(url, str) else None
    if field == "contents" and "title" not in record:
        doc = flashrag_passage(str(doc_id), text, url)
    else:
        title = record.get("title") or ""
        if not isinstance(title, str):
            raise RecordError(path, line, f"expected a string, got {type(title).__name__}", "title")
        doc = Document(id=str(doc_id), title=title, text=text, url=url)
    if record.get(PAGE_ID) is not None:
        doc.metadata[PAGE_ID] = str(record[PAGE_ID])
    metadata = record.get(METADATA, {})
    if not isinstance(metadata, dict):
        raise RecordError(path, line, f"expected an object, got {type(metadata).__name__}", METADATA)
    doc.metadata.update(metadata)
    return doc


def flashrag_passage(doc_id: str, contents: str, url: str | None = None) -> Document:
    """A passage of FlashRAG's `{"id", "contents"}` corpora, where the title is the first line of `contents`:
    its title that line with the quotes around it stripped, its text the rest, as FlashRAG's BM25Retriever
    (flashrag/retriever/retriever.py) splits them (`content.split("\\n")[0].strip('"')`), so supporting
    passages match by title. Where the line is not the title as written (quoted, or empty), it is kept in
    `metadata["title_line"]`: what is indexed and what FlashRAG's prompt shows stay its `contents`. One line
    without a newline holds no title: it is the text (FlashRAG's prompt shows it as its title all the same)."""
    first, newline, rest = contents.partition("\n")
    if not newline:
        return Document(id=doc_id, title="", text=contents, url=url)
    title = first.strip('"')
    return Document(
        id=doc_id, title=title, text=rest, url=url, metadata={TITLE_LINE: first} if first != title or not title else {}
    )


def passage_text(doc: Document, with_title: bool = True) -> str:
    """What gets indexed: `title + "\\n" + text`, as ALCE retrieval.py (GTR) and LLatrieval
    Iterative_retrieval.py (BGE) encode psgs_w100 (a FlashRAG passage: its `contents` as written); the text
    alone when there is no title."""
    title = doc.metadata.get(TITLE_LINE, doc.title)
    return f"{title}\n{doc.text}" if with_title and title else doc.text

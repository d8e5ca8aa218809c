"""Streaming readers for retrieval corpora: one passage at a time, never the whole file.

- DPR `psgs_w100.tsv`: a header `id<TAB>text<TAB>title`, then one passage per row, the text
  quoted CSV-style (`"..."`, inner quotes doubled). Read with `csv.reader(delimiter="\\t")` as
  ALCE retrieval.py and LLatrieval Iterative_retrieval.py do.
- JSONL, one passage per line: `{"id", "title", "contents"}` (pyserini's, OmniEval's: contents
  without the title), `{"id", "title", "text"}` (BEIR's `"_id"` and BrowseComp-Plus's `"docid"`, whose corpus is
  `{"docid", "text", "url"}`, are accepted for `"id"`), or FlashRAG's
  `{"id", "contents"}` whose first line is the title (`flashrag_passage`); `"url"` is kept, and so are
  `"wikipedia_id"` (in the metadata: KILT's retrieval metrics score the pages passages are from) and a
  `"metadata"` object's keys (in the metadata: e.g. MultiHop-RAG's `published_at` and `source`, which its
  prompt shows). A null is an absent key, at any depth of an object (`without_nulls`): `"title": null` is no title.
- A folder written by Hugging Face `datasets`' `save_to_disk` (BrowseComp-Plus's corpus): each row read as a
  JSONL line is (`saved_corpus`), its index standing for a row's byte offset.
- A folder of MS MARCO V2.1 segmented shards (`msmarco_v2.1_doc_segmented_NN.json.gz`, TREC RAG's corpus, or
  unpacked: `.json`, `.jsonl`), read shard by shard (`segmented_corpus`); a JSONL line of a segment
  (`{"docid", "segment", ...}`, no `text` or `contents`) is read as a shard's line is.

A bad row is yielded as a `RecordError` (file, line, field) and the stream goes on.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from ..._errors import ConfigError, RecordError
from ..._storage.csv_fields import large_fields
from ..._storage.datafiles import is_saved_dataset
from ..._storage.files import open_file
from ..._storage.jsonl import LocatedLine, broken_off, line_record, located_lines
from ..._types import Document
from .saved import data_files, load_saved, saved_records
from .segmented import (
    SHARDS,
    is_segmented_folder,
    segment_document,
    segmented_passage_at,
    segmented_rows,
    shard_files,
)

DPR_COLUMNS = ("id", "text", "title")
DEFAULT_COLUMNS = {name: i for i, name in enumerate(DPR_COLUMNS)}
BOM = codecs.BOM_UTF8
_NOT_UTF8 = re.compile("[\udc80-\udcff]")
FORMATS = {".tsv": "dpr_tsv", ".jsonl": "jsonl"}
SAVED_DATASET = "saved_dataset"  # a folder of `datasets`' save_to_disk
SEGMENTED = "msmarco_v2.1_segmented"  # a folder of MS MARCO V2.1 segmented gzip JSONL shards
TITLE_LINE = "title_line"  # Document.metadata: a FlashRAG passage's first line of `contents`, as written
PAGE_ID = "wikipedia_id"  # Document.metadata: the Wikipedia page a passage is from (KILT's page-level retrieval)
METADATA = "metadata"  # a JSONL line's object of other values kept in Document.metadata


def corpus_format(path: Path) -> str:
    """How the corpus at `path` is read: a file by its suffix, a folder as a saved dataset; anything else is a
    ConfigError saying what a corpus can be."""
    if path.is_dir():
        if is_segmented_folder(path):
            return SEGMENTED
        if not is_saved_dataset(path):
            raise ConfigError(
                f"corpus {path} is a folder but no dataset saved by Hugging Face datasets (no state.json or "
                f"dataset_dict.json) and no MS MARCO V2.1 segmented shards ({SHARDS}): save it with "
                "Dataset.save_to_disk(FOLDER), or name a .tsv or .jsonl file"
            )
        return SAVED_DATASET
    if not path.is_file():
        raise ConfigError(
            f"corpus {path} not found; pass --corpus with an existing .tsv or .jsonl file or a datasets "
            "save_to_disk folder"
        )
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ConfigError(
            f"corpus {path}: unknown format '{path.suffix}'; expected .tsv (DPR psgs_w100: "
            "id, text, title), .jsonl ({id, title, contents} or {id, title, text}) or a datasets save_to_disk folder"
        )
    return fmt


def read_corpus(path: str | Path) -> Iterator[Document | RecordError]:
    """Every passage of `path` in file order (format by `corpus_format`)."""
    return (item for _, item in corpus_rows(path))


def corpus_rows(path: str | Path) -> Iterator[tuple[int, Document | RecordError]]:
    """Every passage of `path` in file order with the byte offset its row starts at, or a saved dataset's row
    index (`passage_reader` reads it back from there)."""
    path = Path(path)
    fmt = corpus_format(path)
    if fmt == SAVED_DATASET:
        return saved_dataset_rows(path)
    if fmt == SEGMENTED:
        return segmented_rows(path)
    return dpr_tsv_rows(path) if fmt == "dpr_tsv" else jsonl_corpus_rows(path)


def passage_reader(path: Path) -> Callable[[int], Document | RecordError]:
    """Reads back the passage whose row `corpus_rows` found at `start` (a byte offset; a saved dataset's row
    index), as it read it. A saved dataset is opened once and stays memory-mapped between reads."""
    fmt = corpus_format(path)
    if fmt == SAVED_DATASET:
        rows = load_saved(path)
        return lambda start: saved_dataset_passage(rows[start], path, start)
    if fmt == SEGMENTED:
        return lambda position: segmented_passage_at(path, position)
    return lambda start: passage_at(path, start)


def corpus_files(path: Path) -> list[Path]:
    """The files whose content is the corpus: the file itself, a saved dataset's Arrow files, the shards."""
    if not path.is_dir():
        return [path]
    return shard_files(path) if corpus_format(path) == SEGMENTED else data_files(path)


def passage_at(path: Path, start: int) -> Document | RecordError:
    """The passage of a JSONL or DPR TSV file whose row starts at byte `start`."""
    with open_file(path) as handle:
        if corpus_format(path) == "jsonl":
            handle.seek(start)
            return jsonl_passage(next(located_lines([handle.readline()], str(path), start=start)), path)
        text = io.TextIOWrapper(handle, encoding="utf-8-sig", errors="surrogateescape", newline="")
        with large_fields():
            header = next(csv.reader(text, delimiter="\t"), [])
            text.detach()  # the handle stays open; the row is read from its own start
            handle.seek(start)
            text = io.TextIOWrapper(handle, encoding="utf-8", errors="surrogateescape", newline="")
            row = next(csv.reader(text, delimiter="\t"))
        return dpr_row(row, dpr_columns(header) or DEFAULT_COLUMNS, path, 0)


class LineStarts:
    """The lines of a file, remembering the byte offset where the last one handed out starts (`start`) and
    where the next one will (`position`); `size` counts a line's bytes."""

    def __init__(self, lines: Iterable[Any], position: int, size: Callable[[Any], int] = len) -> None:
        self.lines, self.position, self.size = lines, position, size
        self.start = position

    def __iter__(self) -> Iterator[Any]:
        for line in self.lines:
            self.start = self.position
            self.position += self.size(line)
            yield line


def dpr_columns(row: list[str]) -> dict[str, int] | None:
    """Where each column is, when `row` is the header (DPR's loaders skip it the same way)."""
    return {name: row.index(name) for name in DPR_COLUMNS} if set(DPR_COLUMNS) <= set(row) else None


def dpr_tsv_rows(path: Path) -> Iterator[tuple[int, Document | RecordError]]:
    # bytes that are not UTF-8 come through as surrogates, so the row they are in is reported, not the file;
    # utf-8-sig: a BOM (a file saved by Excel or Notepad) made the header a passage with id "\ufeffid"
    with open(path, "rb") as raw:
        bom = len(BOM) if raw.read(len(BOM)) == BOM else 0
    with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        lines = LineStarts(handle, bom, lambda line: len(line.encode("utf-8", "surrogateescape")))
        rows = csv.reader(lines, delimiter="\t")
        columns: dict[str, int] | None = None
        first = True
        while True:
            start = lines.position
            try:
                with large_fields():  # a runaway quote would otherwise end the stream at csv's 128 KiB limit
                    row = next(rows)
            except StopIteration:
                return
            except csv.Error as exc:
                yield start, RecordError(str(path), rows.line_num, f"unreadable TSV row ({exc})")
                continue
            if first:
                first, columns = False, dpr_columns(row)
                if columns is not None:
                    continue
            yield start, dpr_row(row, columns or DEFAULT_COLUMNS, path, rows.line_num)


def dpr_row(row: list[str], columns: dict[str, int], path: str | Path, line: int) -> Document | RecordError:
    """A row of a DPR TSV as its passage, or the RecordError saying why it is none."""
    bad = next((match for field in row if (match := _NOT_UTF8.search(field))), None)
    if bad is not None:
        byte = ord(bad.group()) - 0xDC00
        return RecordError(str(path), line, f"not UTF-8 (byte 0x{byte:02x}); save the file as UTF-8")
    if len(row) != 3:
        return RecordError(str(path), line, f"expected 3 tab-separated fields (id, text, title), got {len(row)}")
    if not row[columns["id"]]:
        return RecordError(str(path), line, "empty passage id", "id")
    return Document(id=row[columns["id"]], title=row[columns["title"]], text=row[columns["text"]])


def saved_dataset_rows(path: Path) -> Iterator[tuple[int, Document | RecordError]]:
    for index, record in enumerate(saved_records(path)):
        yield index, saved_dataset_passage(record, path, index)


def saved_dataset_passage(record: Mapping[str, object], path: Path, index: int) -> Document | RecordError:
    """The passage of a saved dataset's row, or the RecordError (naming the row) saying why it is none."""
    try:
        return jsonl_document(record, str(path), index + 1)
    except RecordError as exc:
        return row_error(exc, index)


def jsonl_corpus_rows(path: Path) -> Iterator[tuple[int, Document | RecordError]]:
    with open_file(path) as handle:
        yield from jsonl_rows(handle, str(path))


def jsonl_rows(lines: Iterable[bytes], where: str, start: int = 0) -> Iterator[tuple[int, Document | RecordError]]:
    """(where it starts, its passage or RecordError) of each line of `lines` that is not blank, the first at byte
    `start`: what `located_lines` and `jsonl_passage` make of them, a stream that breaks off included. A line is
    read by `line_passage`."""
    read = 0
    try:
        for line in lines:
            if line and not line.isspace():  # jsonlines skips a line of white space (its skip_empty)
                yield start, line_passage(line, where, read, start)
            start += len(line)
            read += 1
    except (EOFError, OSError) as exc:  # `located_lines`' stream that broke off (a truncated or unreadable file)
        yield start, broken_off(where, read, start, exc).value


# The values of a line's object that orjson reads as json does (orjson reads an integer beyond 64 bits as a float)
NULL = type(None)
ORJSON_EXACT = frozenset({str, int, NULL})


def line_passage(line: bytes, where: str, index: int, start: int) -> Document | RecordError:
    """The passage of JSONL line `index` (from 0, at byte `start`), as `jsonl_passage` reads it. Read by orjson
    (a build's reading of a passage in a third of the time) where orjson reads it as json does: orjson takes
    only valid JSON in UTF-8 without lone surrogates, NaN or a leading BOM, and reads its strings as json does,
    so where each value of the line's object is a string, an integer or null, it is json's object; any other line
    is read by `located_lines`, which says why it is no passage."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        record = None
    kinds = set(map(type, record.values())) if type(record) is dict else None
    if kinds is None or not kinds <= ORJSON_EXACT:
        return jsonl_passage(next(located_lines([line], where, line=index, start=start)), where)
    try:  # no null left out: no copy of the object (`without_nulls`)
        return record_document(without_nulls(record) if NULL in kinds else record, where, index + 1)
    except RecordError as exc:
        return exc


def jsonl_passage(located: LocatedLine, path: str | Path) -> Document | RecordError:
    """The passage of a JSONL line, or the RecordError saying why it is none."""
    return line_record(located, str(path), jsonl_document)


def jsonl_document(record: Mapping[str, object], path: str, line: int) -> Document:
    """The passage of a JSONL record (or a saved dataset's row), its nulls read as absent keys (`without_nulls`)."""
    return record_document(without_nulls(record), path, line)


def record_document(record: Mapping[str, object], path: str, line: int) -> Document:
    """`jsonl_document` of a record without nulls (its Documents made with positional fields: a third of the
    time of keywords)."""
    if "segment" in record and "contents" not in record and "text" not in record:  # an MS MARCO V2.1 segment
        return segment_document(dict(record), path, line)
    doc_id = record.get("id")  # the first of "id", "_id", "docid" the record has (it holds no null)
    if doc_id is None:
        doc_id = record.get("_id", record.get("docid"))
    if type(doc_id) is not str or not doc_id:
        doc_id = checked_id(doc_id, path, line)
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
        doc = flashrag_passage(doc_id, text, url)
    else:
        title = record.get("title") or ""
        if not isinstance(title, str):
            raise RecordError(path, line, f"expected a string, got {type(title).__name__}", "title")
        doc = Document(doc_id, title, text, url)
    if PAGE_ID in record:
        doc.metadata[PAGE_ID] = str(record[PAGE_ID])
    if METADATA in record:
        metadata = record[METADATA]
        if not isinstance(metadata, dict):
            raise RecordError(path, line, f"expected an object, got {type(metadata).__name__}", METADATA)
        doc.metadata.update(metadata)
    return doc


def checked_id(doc_id: object, path: str, line: int) -> str:
    """A passage id that is not a non-empty str, as a str: a whole number's digits; none, an empty one or another
    value is a RecordError."""
    if doc_id is None or doc_id == "":
        raise RecordError(path, line, "missing passage id", "id")
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):  # 1.0 would be "1.0", never qrels' "1"
        raise RecordError(path, line, f"passage id {doc_id!r}: expected a string or a whole number", "id")
    return str(doc_id)


def without_nulls(value: Any) -> Any:
    """`value` with every null in an object left out, at any depth (in lists too; a list's own nulls are kept): a
    saved dataset holds a null wherever a row has no value for a column or a struct's field (Arrow gives every row
    every column), so a null reads as an absent key, in a JSONL line as in a saved row, for both to read alike."""
    if isinstance(value, dict):
        return {key: without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value]
    return value


def row_error(exc: RecordError, row: int) -> RecordError:
    """`exc` of a record with no line of its own (a row of an index's store, of a saved dataset) named by its row."""
    message = str(exc).split(": ", 1)[-1]
    return RecordError(exc.path, row + 1, message, exc.field, at=f"row {row}")


def flashrag_passage(doc_id: str, contents: str, url: str | None = None) -> Document:
    """A passage of FlashRAG's `{"id", "contents"}` corpora, where the title is the first line of `contents`:
    its title that line with the quotes around it stripped, its text the rest, as FlashRAG's BM25Retriever
    (flashrag/retriever/retriever.py) splits them (`content.split("\\n")[0].strip('"')`), so supporting
    passages match by title. Where the line is not the title as written (quoted, or empty), it is kept in
    `metadata["title_line"]`: what is indexed and what FlashRAG's prompt shows stay its `contents`. One line
    without a newline holds no title: it is the text (FlashRAG's prompt shows it as its title all the same)."""
    first, newline, rest = contents.partition("\n")
    if not newline:
        return Document(doc_id, "", contents, url)
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

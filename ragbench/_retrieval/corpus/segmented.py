"""The MS MARCO V2.1 segmented document corpus (TREC RAG 2024 and 2025) in its own distributed form: a folder of
gzip JSONL shards `msmarco_v2.1_doc_segmented_NN.json.gz`, each line one segment
`{"docid", "url", "title", "headings", "segment", "start_char", "end_char"}` (trec-rag.github.io's corpus and
track-guideline posts), read shard by shard in name order without unpacking them. A shard unpacked
(`..._NN.json`, or `.jsonl`) is read as it is, as Anserini's MsMarcoV2DocCollection reads either; one shard there
both packed and unpacked is refused (its segments would be read twice). A single `.jsonl` file of segment lines
is read by the JSONL corpus reader, each line by `segment_document` too.

A segment is a Document whose id is its `docid` (`msmarco_v2.1_doc_29_677149#3_1637632`, what the qrels and the
run files name), its title the page's `title` and its text the `segment` (what ragnarok shows the reader:
"Title: ... Content: <segment>"); `url` is kept, and `headings`, `start_char` and `end_char` go into the metadata.
Where a passage's row is (`corpus_rows`' position) is the shard's index times SHARD_SPAN plus the line's offset
in the unpacked shard. A shard that is cut short or corrupt is refused in one line naming it: reading on would
leave the rest of its segments out of an index unseen.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._errors import ConfigError, RecordError
from ..._storage.files import open_file
from ..._storage.gzipped import open_gzip
from ..._storage.jsonl import LocatedLine, StreamBroken, line_record, located_lines
from ..._types import Document

SHARDS = "msmarco_v2.1_doc_segmented_*.json.gz, or unpacked .json / .jsonl"  # as messages name them
SHARD_PREFIX = "msmarco_v2.1_doc_segmented_"
SHARD_SUFFIXES = (".json.gz", ".json", ".jsonl")  # the shard as distributed, and unpacked
SHARD_SPAN = 1 << 40  # more than an unpacked shard's bytes (the largest is a few GB)
HEADINGS, START_CHAR, END_CHAR = "headings", "start_char", "end_char"


def shard_files(folder: Path) -> list[Path]:
    """The folder's shards, packed or not, in name order (00, 01, ...); a shard there in two forms is a
    ConfigError naming it."""
    found: dict[str, Path] = {}
    for path in sorted(folder.glob(f"{SHARD_PREFIX}*")):
        suffix = next((s for s in SHARD_SUFFIXES if path.name.endswith(s)), None)
        if suffix is None or not path.is_file():
            continue
        shard = path.name[: -len(suffix)]
        if shard in found:
            raise ConfigError(
                f"corpus {folder}: shard {shard} is there twice ({found[shard].name}, {path.name}): its segments "
                "would be read twice; move one away"
            )
        found[shard] = path
    return [found[shard] for shard in sorted(found)]


def open_shard(shard: Path) -> Any:
    """The shard's unpacked bytes: gunzipped as read, or the file itself."""
    return open_gzip(shard) if shard.name.endswith(".gz") else open_file(shard)


def is_segmented_folder(folder: Path) -> bool:
    return bool(shard_files(folder))


def segmented_rows(folder: Path) -> Iterator[tuple[int, Document | RecordError]]:
    """Every segment of every shard, in order, with its position (`SHARD_SPAN` * shard + offset)."""
    for number, shard in enumerate(shard_files(folder)):
        with open_shard(shard) as handle:
            for located in located_lines(handle, str(shard)):
                yield number * SHARD_SPAN + located.start, shard_passage(located, shard)


def segmented_passage_at(folder: Path, position: int) -> Document | RecordError:
    """The segment `segmented_rows` found at `position` (gzip seeks by unpacking up to there)."""
    number, start = divmod(position, SHARD_SPAN)
    shard = shard_files(folder)[number]
    with open_shard(shard) as handle:
        handle.seek(start)
        located = next(located_lines(handle, str(shard), start=start))
        return shard_passage(located, shard)


def shard_passage(located: LocatedLine, shard: Path) -> Document | RecordError:
    """The segment of a shard's line, or the RecordError saying why it is none; a broken shard is a ConfigError."""
    if isinstance(located.value, StreamBroken):
        raise ConfigError(
            f"corpus shard {shard}: {str(located.value).split(': ', 1)[-1]}; download the shard again "
            "(gzip -t names a damaged one)"
        )
    return line_record(located, str(shard), segment_document)


def segment_document(record: dict[str, Any], path: str, line: int) -> Document:
    """The Document of one segment record; a missing docid or segment, or a field of the wrong type, is a
    RecordError naming it."""
    doc_id = record.get("docid")
    if not isinstance(doc_id, str) or not doc_id:
        raise RecordError(path, line, f"docid {doc_id!r}: expected a non-empty string", "docid")
    for field in ("segment", "title", "url", HEADINGS):
        if not isinstance(record.get(field, ""), str):
            raise RecordError(path, line, f"expected a string, got {type(record[field]).__name__}", field)
    if "segment" not in record:
        raise RecordError(path, line, "missing field", "segment")
    metadata: dict[str, Any] = {key: record[key] for key in (HEADINGS, START_CHAR, END_CHAR) if key in record}
    return Document(
        id=doc_id, title=record.get("title") or "", text=record["segment"], url=record.get("url"), metadata=metadata
    )


def anserini_contents(doc: Document) -> str:
    """What Anserini's MsMarcoV2DocCollection indexes of a segment (its `contents()`): the url, title, headings
    and segment joined by a space (a field the line lacks as empty)."""
    headings = doc.metadata.get(HEADINGS, "")
    return f"{doc.url or ''} {doc.title} {headings if isinstance(headings, str) else ''} {doc.text}"

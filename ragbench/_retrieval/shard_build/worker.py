"""A shard-parallel build's two steps for one shard, as a worker runs them (a Ray task, `driver`; tests call them
in process): `analyse_part` reads the shard's part of the corpus where it lies and writes the shard's docs store and
its kind's step-1 files into the shard's folder; `finish_part` writes its kind's shard files. Each step ends by
recording, beside the folder, what it wrote (each file's size and content digest) and, for step 1, the part's
statistics: a resumed build keeps a step whose record its files still match (`state`), and does it again otherwise.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from ..._errors import RecordError
from ..._storage.files import write_atomically
from ..._storage.locations import put_folder
from ..._storage.own_trees import remove_all_but_links
from ..corpus.chunking import chunk_documents, parse_split, title_header
from ..corpus.parts import CorpusPart, PartReading, error_record, read_part
from ..index.built import KEPT_ERRORS
from ..index.docstore import DocStoreWriter
from ..sharded.layout import file_records
from .kind import ShardKind, Stats, TextSettings
from .terms import TERMS_SUFFIX, write_part_terms

IDS_SUFFIX = ".ids.npy"  # beside a shard's folder: its passages' id hashes, sorted (`state.repeated_across`)


def id_hash(doc_id: str) -> int:
    """A passage id's 63-bit hash, the same in every process (Python's `hash` of a str is not)."""
    return (
        int.from_bytes(hashlib.blake2b(doc_id.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little") >> 1
    )


def fresh_folder(folder: Path) -> None:
    """`folder`, a shard's folder of the build's own state, emptied (a step done again starts from nothing)."""
    if folder.is_dir() and not folder.is_symlink():
        remove_all_but_links(folder)
    folder.mkdir()


def analyse_part(
    kind: ShardKind, part: CorpusPart, folder: Path, text: TextSettings, record: Path, buckets: int
) -> Stats:
    """Step 1 of shard `part.number` (module docstring), into `folder`; its result, also written to `record`:
    passages, lines, sha256 of the bytes read, bad records (count and the first ones), ids repeated within the
    shard, and the kind's statistics (`stats`). A kind's per-term statistics (its `terms`: words and document
    frequencies) go to a file beside `folder` in `buckets` buckets (`terms`); the result holds only its record."""
    fresh_folder(folder)
    reading = PartReading()
    passages = read_part(part, reading)
    if text.split is not None:
        splitter = parse_split(text.split)
        header = title_header(text.split_header) if text.split_header is not None else None
        passages = chunk_documents(passages, splitter, whole_up_to=splitter.chunk_size, header=header)
    docs, builder = DocStoreWriter(folder), kind.part_builder(folder)
    errors: list[Any] = []
    bad = 0
    hashes: list[int] = []
    chunk: list[str] = []
    for item in passages:
        if isinstance(item, RecordError):
            bad += 1
            if len(errors) < KEPT_ERRORS:
                errors.append(error_record(item))
            continue
        docs.add(item)
        hashes.append(id_hash(item.id or ""))
        chunk.append(builder.indexed_text(item, text.title, part.form))
        if len(chunk) == text.chunk_size:
            builder.add(chunk)
            chunk = []
    if chunk:
        builder.add(chunk)
    docs.close()
    np.save(folder.with_name(folder.name + IDS_SUFFIX), np.sort(np.asarray(hashes, dtype=np.int64)))
    stats = builder.analysed()
    terms = stats.pop("terms", None)
    result: Stats = {
        "passages": len(docs),
        "lines": reading.lines,
        "bytes": [reading.first, reading.end],  # where its lines start and end (a one-file corpus)
        "sha256": reading.digest.hexdigest(),
        "bad_records": bad,
        "errors": errors,
        "repeated": docs.repeated_ids() if len(docs) else {},
        "stats": stats,
    }
    if terms is not None:
        path = folder.with_name(folder.name + TERMS_SUFFIX)
        result["terms"] = write_part_terms(path, terms["words"], terms["doc_freqs"], buckets)
    write_atomically(record, json.dumps({"result": result, "files": file_records(folder)}))
    return result


def finish_part(
    kind: ShardKind, folder: Path, shared: Stats, own: Stats, analysed: Path, record: Path, store: str | None = None
) -> None:
    """Step 2 of a shard (module docstring): anything in `folder` step 1 did not write (left by a killed step 2)
    removed, then the kind's shard files written, put in the object store's folder `store` where given (the index
    is built there: each task writes its own shard), and recorded in `record`."""
    step1 = json.loads(analysed.read_text(encoding="utf-8"))["files"]
    for path in sorted(folder.rglob("*"), reverse=True):
        name = str(path.relative_to(folder))
        if path.is_file() and not path.is_symlink() and name not in step1:
            path.unlink()
        elif path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
            path.rmdir()
    kind.finish(folder, shared, own)
    if store is not None:
        put_folder(folder, store)
    write_atomically(record, json.dumps({"files": file_records(folder)}))

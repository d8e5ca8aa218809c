"""A shard-parallel build's two steps for one shard, as a worker runs them (a Ray task, `driver`; tests call them
in process): `analyse_part` reads the shard's part of the corpus where it lies and writes the shard's docs store and
its kind's step-1 files into the shard's folder; `finish_part` writes its kind's shard files. Each step ends by
recording, beside the folder, what it wrote (each file's size and content digest) and, for step 1, the part's
statistics: a resumed build keeps a step whose record its files still match (`state`), and does it again otherwise.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from ...._errors import ConfigError, RecordError
from ...._storage.locations import FetchedFileMismatch, put_folder
from ...._storage.own_trees import remove_all_but_links
from ...corpus.chunking import chunk_documents, parse_split, title_header
from ...corpus.parts import CorpusPart, PartReading, error_record, read_part
from ...index.building import KEPT_ERRORS
from ...index.docstore import DocStoreWriter
from ...index.remote_docstore import write_block_record
from ..kind import BuildsShards
from ..layout import file_records
from .kind import Stats, TextSettings
from .state_files import StateFiles, damaged_state, ids_name, record_name, shard_name, terms_name
from .terms import file_record, write_part_terms


def id_hash(doc_id: str) -> int:
    """A passage id's 63-bit hash, the same in every process (Python's `hash` of a str is not)."""
    return (
        int.from_bytes(hashlib.blake2b(doc_id.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little") >> 1
    )


def fresh_folder(folder: Path) -> None:
    """`folder`, a shard's folder of the build's own state, emptied (a step done again starts from nothing)."""
    if folder.is_dir() and not folder.is_symlink():
        remove_all_but_links(folder)
    folder.mkdir(parents=True)


def analyse_part(kind: BuildsShards, part: CorpusPart, state: StateFiles, text: TextSettings, buckets: int) -> Stats:
    """Step 1 of shard `part.number` (module docstring), in its folder of `state`; its result, also recorded:
    passages, lines, sha256 of the bytes read, bad records (count and the first ones), ids repeated within the
    shard, and the kind's statistics (`stats`). A kind's per-term statistics (its `terms`: words and document
    frequencies) go to a file beside the folder in `buckets` buckets (`terms`); the result holds only its record."""
    with state.working() as files:
        return analysed(kind, part, files, text, buckets)


def analysed(kind: BuildsShards, part: CorpusPart, state: StateFiles, text: TextSettings, buckets: int) -> Stats:
    """`analyse_part` in the task's own `state` folder."""
    number = part.number
    folder = state.path(shard_name(number))
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
    write_block_record(folder)  # what a run reading the docs store where it lies checks each read by
    np.save(state.path(ids_name(number)), np.sort(np.asarray(hashes, dtype=np.int64)))
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
        path = state.path(terms_name(number))
        result["terms"] = write_part_terms(path, terms["words"], terms["doc_freqs"], buckets)
        state.put(terms_name(number))
    ids = file_record(state.path(ids_name(number)))
    files = file_records(folder)
    for name in (ids_name(number), shard_name(number)):
        state.put(name)
    state.write_record(record_name(number, "analysed"), {"result": result, "files": files, "ids": ids})
    return result


def finish_part(
    kind: BuildsShards, state: StateFiles, number: int, shared: Stats, own: Stats, store: str | None = None
) -> None:
    """Step 2 of shard `number` (module docstring): its step-1 files and nothing else in its folder (a killed step
    2's files removed; in a build into a store, they and the other shards' its kind reads, `BuildsShards.shards_read`,
    fetched from there), then the kind's shard files written, put in the object store's folder `store` where given
    (the index is built there: each task writes its own shard), and recorded."""
    with state.working() as files:
        step1 = fetched_step_one(files, number)
        for other in kind.shards_read(number, shared):
            fetched_step_one(files, other)
        folder = files.path(shard_name(number))
        for path in sorted(folder.rglob("*"), reverse=True):
            relative = str(path.relative_to(folder))
            if path.is_file() and not path.is_symlink() and relative not in step1:
                path.unlink()
            elif path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
                path.rmdir()
        kind.finish(folder, shared, own)
        if store is not None:
            put_folder(folder, store)
        files.write_record(record_name(number, "finished"), {"files": file_records(folder)})


def fetched_step_one(state: StateFiles, number: int) -> dict[str, Any]:
    """The files step 1 of shard `number` recorded (fetched from the store, in a build there); a ConfigError naming
    the first that is not what its record says, and the fix."""
    record = record_name(number, "analysed")
    step1: dict[str, Any] = state.read_record(record)["files"]
    try:
        state.fetched({f"{shard_name(number)}/{file}": entry for file, entry in step1.items()})
    except FetchedFileMismatch as exc:
        fix = f"remove {state.location(record)} (shard {number} is then built again)"
        raise ConfigError(damaged_state(exc.url, exc.problem, fix)) from None
    return step1

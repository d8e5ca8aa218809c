"""The layout of a sharded index: `<index>/shards-<S>/shards.json` and one folder a shard beside it.

shards.json records the index it was split from (its kind, passage count and the sha256 of its manifest.json,
so shards of an index built again are refused), each shard's passage range [start, stop) and the size of each
of its files. `read_layout` checks all of it, and that the ranges cover the corpus in order, before any shard is
served: a missing, cut-short or foreign file is an IndexDamage naming it. What a shard's files hold is checked by
the shard actor that loads them (`searcher`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..index_damage import IndexDamage, read_json_object, typed_fields
from ..staging import MANIFEST_FILE

LAYOUT_FILE = "shards.json"
LAYOUT_FORMAT = 1
LAYOUT_TYPES: dict[str, tuple[type, ...]] = {
    "format": (int,),
    "retriever": (str,),
    "doc_count": (int,),
    "index_manifest_sha256": (str,),
    "shards": (list,),
}


def shards_folder(index: Path, shards: int) -> Path:
    return index / f"shards-{shards}"


def manifest_sha256(index: Path) -> str:
    return hashlib.sha256((index / MANIFEST_FILE).read_bytes()).hexdigest()


@dataclass(frozen=True)
class Shard:
    number: int
    folder: Path
    start: int
    stop: int

    def describe(self) -> str:
        return f"shard {self.number} (passages {self.start}..{self.stop - 1}, {self.folder})"


@dataclass(frozen=True)
class Layout:
    folder: Path
    retriever: str
    doc_count: int
    shards: list[Shard]


def layout_record(kind: str, doc_count: int, index: Path, folders: list[Path], ranges: list[tuple[int, int]]) -> str:
    """The shards.json text of shard `folders` holding `ranges` (their files written)."""
    shards = [
        {"folder": folder.name, "start": start, "stop": stop, "files": file_sizes(folder)}
        for folder, (start, stop) in zip(folders, ranges)
    ]
    record = {
        "format": LAYOUT_FORMAT,
        "retriever": kind,
        "doc_count": doc_count,
        "index_manifest_sha256": manifest_sha256(index),
        "shards": shards,
    }
    return json.dumps(record, indent=1)


def file_sizes(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in sorted(folder.rglob("*")) if p.is_file()}


def read_layout(folder: Path, index: Path) -> Layout:
    """The layout of the sharded index `folder`, split from the index at `index`; an IndexDamage naming the first
    file found wrong (module docstring)."""
    record = read_json_object(folder, LAYOUT_FILE)
    typed_fields(LAYOUT_FILE, record, LAYOUT_TYPES, required=tuple(LAYOUT_TYPES))
    if record["format"] != LAYOUT_FORMAT:
        raise IndexDamage(LAYOUT_FILE, f"has format {record['format']}, this ragbench reads {LAYOUT_FORMAT}")
    if record["index_manifest_sha256"] != manifest_sha256(index):
        raise IndexDamage(LAYOUT_FILE, f"was split from another build of the index (its {MANIFEST_FILE} changed)")
    shards = [shard_entry(folder, number, entry) for number, entry in enumerate(record["shards"])]
    stops = [0] + [shard.stop for shard in shards]
    for shard, expected in zip(shards, stops):
        if shard.start != expected or shard.stop <= shard.start:
            raise IndexDamage(
                LAYOUT_FILE, f"shard {shard.number} holds passages {shard.start}..{shard.stop - 1}, not from {expected}"
            )
    if not shards or stops[-1] != record["doc_count"]:
        raise IndexDamage(LAYOUT_FILE, f"its shards end at passage {stops[-1]}, not {record['doc_count']}")
    return Layout(folder, record["retriever"], record["doc_count"], shards)


def shard_entry(folder: Path, number: int, entry: Any) -> Shard:
    """Shard `number` of shards.json, its files there at their recorded sizes."""
    if not isinstance(entry, dict):
        raise IndexDamage(LAYOUT_FILE, f"shard {number} is not an object")
    typed_fields(LAYOUT_FILE, entry, {"folder": (str,), "start": (int,), "stop": (int,), "files": (dict,)}, ())
    if (
        not {"folder", "start", "stop", "files"} <= entry.keys()
        or "/" in entry["folder"]
        or entry["folder"] in ("", "..")
    ):
        raise IndexDamage(LAYOUT_FILE, f"shard {number} lacks its folder, start, stop or files")
    shard = Shard(number, folder / entry["folder"], entry["start"], entry["stop"])
    for name, size in entry["files"].items():
        path = shard.folder / name
        found = path.stat().st_size if path.is_file() else None
        if found != size:
            where = f"{entry['folder']}/{name}"
            raise IndexDamage(where, "is missing" if found is None else f"holds {found} bytes, shards.json {size}")
    return shard

"""The layout of a sharded index: `<index>/shards-<S>/shards.json` and one folder a shard beside it.

shards.json records the index it was split from (its kind, passage count and the sha256 of its manifest.json, or
of its files' sampled digests where it has none: a FlashRAG index folder or faiss file, so shards of an index built
again are refused; shards built as shards, `shard_build`, have their own manifest.json beside shards.json, whose
sha256 it records), each shard's passage range [start, stop) and, for each of its files, its size and its sampled
content digest (`content_digest`: 256 blocks of 4 KiB spread over the file, 1 MiB read whatever its size), so a
shard proves it holds the files the split wrote: another shard's file, or another split's of the same size, is
refused. A split also records the block digests (`block_digests.block_record`, every byte) of the index's own files
its kind's front reads (`FRONT_FIELD`: the manifest, the docs store), which a run fetching them from an object store
checks them by (`remote.front_copy`). `read_layout` checks all of it, and that the ranges cover the corpus in order, before any shard is
served; the shard actor checks its files' sizes and digests again where it loads them (`searcher`), then what
they hold as it reads them. A missing, cut-short or foreign file is an IndexDamage naming it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._storage.block_digests import block_digest, record_problem
from ..._storage.content_digest import content_digest
from ..._storage.locations import FetchedFileMismatch, absolute_path, fetched_folder, is_remote, joined, remote_object
from ..index.damage import IndexDamage, read_json_object, typed_fields, whole_number
from ..index.staging import MANIFEST_FILE

Listing = tuple[str, dict[str, int]]  # a folder's URL in an object store, and its files' sizes (`remote_files`)
LAYOUT_FILE = "shards.json"
LAYOUT_FORMAT = 2  # 2: each file's content digest beside its size
FRONT_FIELD = "front_blocks"  # a split's: the block digests of the index's files its front fetches from a store
LAYOUT_TYPES: dict[str, tuple[type, ...]] = {
    "format": (int,),
    "retriever": (str,),
    "doc_count": (int,),
    "index_manifest_sha256": (str,),
    "shards": (list,),
}


def shards_folder(index: Path, shards: int) -> Path:
    """`index`/shards-S, or beside an index that is one file (faiss): `FILE.shards-S`."""
    return index.with_name(f"{index.name}.shards-{shards}") if index.is_file() else index / f"shards-{shards}"


def split_from(folder: Path) -> Path:
    """The index a shards folder was split from (`shards_folder`'s inverse)."""
    name, _, _ = folder.name.rpartition(".shards-")
    return folder.parent / name if name else folder.parent


def manifest_sha256(index: Path) -> str:
    """The sha256 of the index's manifest.json; where it has none (an index FlashRAG built), of its files' sampled
    digests (`content_digest`, its shards and hidden files left out)."""
    if (index / MANIFEST_FILE).is_file():
        return hashlib.sha256((index / MANIFEST_FILE).read_bytes()).hexdigest()
    if index.is_file():
        files = [index]
    else:
        files = sorted(p for p in index.iterdir() if p.is_file() and not p.name.startswith("."))
    return hashlib.sha256(json.dumps([[p.name, content_digest(p)] for p in files]).encode()).hexdigest()


@dataclass(frozen=True)
class Shard:
    number: int
    folder: Path
    start: int
    stop: int
    files: tuple[Path, ...] = ()  # tevatron_dense: the index's own shard files it serves (no split)
    written: tuple[tuple[str, int, str], ...] = ()  # (file, bytes, content digest) of each file the split wrote
    source: str = ""  # the URL of its folder in an object store, fetched where it is served (`fetched_shard`)

    def describe(self) -> str:
        return f"shard {self.number} (passages {self.start}..{self.stop - 1}, {self.source or self.folder})"


@dataclass(frozen=True)
class Layout:
    folder: Path
    retriever: str
    doc_count: int
    shards: list[Shard]
    fix: str = ""  # what to do about a damaged shard; empty: split the index again

    def remedy(self) -> str:
        """What to do about a damaged or missing shard."""
        return self.fix or (
            f"split the index again: ragbench index shard --index {split_from(self.folder)} "
            f"--shards {len(self.shards)} --overwrite"
        )


def layout_record(
    kind: str,
    doc_count: int,
    index: Path,
    folders: list[Path],
    ranges: list[tuple[int, int]],
    files: list[Any] | None = None,
    front: dict[str, Any] | None = None,
) -> str:
    """The shards.json text of shard `folders` holding `ranges` (their files written; `files`: each one's
    `file_records`, where the workers that wrote them made them; `front`: the `block_record` of the index's files
    the run's process reads, `FRONT_FIELD`, where a split records them)."""
    records = files if files is not None else [file_records(folder) for folder in folders]
    shards = [
        {"folder": folder.name, "start": start, "stop": stop, "files": held}
        for folder, (start, stop), held in zip(folders, ranges, records)
    ]
    record = {
        "format": LAYOUT_FORMAT,
        "retriever": kind,
        "doc_count": doc_count,
        "index_manifest_sha256": manifest_sha256(index),
        "shards": shards,
        **({FRONT_FIELD: front} if front is not None else {}),
    }
    return json.dumps(record, indent=1)


def file_records(folder: Path) -> dict[str, dict[str, int | str | None]]:
    """Each file of a shard `folder`: its size and its content digest."""
    return {
        str(p.relative_to(folder)): {"bytes": p.stat().st_size, "digest": content_digest(p)}
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def check_written(shard: Shard) -> None:
    """Each file the split wrote into `shard` is there, of its size and content digest; an IndexDamage naming the
    first that is not (module docstring). At 10^8 passages this reads 1 MiB a file, whatever the shard's size."""
    for name, size, digest in shard.written:
        path, where = shard.folder / name, f"{shard.folder.name}/{name}"
        found = path.stat().st_size if path.is_file() else None
        if found != size:
            raise IndexDamage(where, "is missing" if found is None else f"holds {found} bytes, shards.json {size}")
        if (held := content_digest(path)) != digest:
            raise IndexDamage(
                where,
                f"is not the file split into shard {shard.number} (passages {shard.start}..{shard.stop - 1}): its "
                f"content digest is {held}, shards.json's {digest} (another shard's or another split's file)",
            )


def read_layout(folder: Path, index: Path, remote: Listing | None = None) -> Layout:
    """The layout of the sharded index `folder`, split from the index at `index`; an IndexDamage naming the first
    file found wrong (module docstring). `remote`: the shards' folder in an object store (its shards.json copied
    to `folder`), where its files' sizes are checked here and their digests where they are fetched."""
    record = read_json_object(folder, LAYOUT_FILE)
    typed_fields(LAYOUT_FILE, record, LAYOUT_TYPES, required=tuple(LAYOUT_TYPES))
    if record["format"] != LAYOUT_FORMAT:
        raise IndexDamage(LAYOUT_FILE, f"has format {record['format']}, this ragbench reads {LAYOUT_FORMAT}")
    source = folder if (folder / MANIFEST_FILE).is_file() else index  # built in shards: their own manifest
    if record["index_manifest_sha256"] != manifest_sha256(source):
        raise IndexDamage(LAYOUT_FILE, f"was split from another build of the index (its {MANIFEST_FILE} changed)")
    # an earlier split's records none; in a store, `remote.front_copy` reads every byte of the files
    problem = front_problem(record[FRONT_FIELD], source if remote is None else None) if FRONT_FIELD in record else ""
    if problem:
        raise IndexDamage(LAYOUT_FILE, f"{FRONT_FIELD} {problem}")
    shards = [shard_entry(folder, number, entry, remote) for number, entry in enumerate(record["shards"])]
    stops = [0] + [shard.stop for shard in shards]
    for shard, expected in zip(shards, stops):
        if shard.start != expected or shard.stop <= shard.start:
            raise IndexDamage(
                LAYOUT_FILE, f"shard {shard.number} holds passages {shard.start}..{shard.stop - 1}, not from {expected}"
            )
    if not shards or stops[-1] != record["doc_count"]:
        raise IndexDamage(LAYOUT_FILE, f"its shards end at passage {stops[-1]}, not {record['doc_count']}")
    return Layout(folder, record["retriever"], record["doc_count"], shards)


FRONT_SAMPLES = 16  # blocks of each front file `front_problem` reads here: 1 MiB of 64 KiB blocks


def front_problem(front: Any, index: Path | None) -> str:
    """What is wrong with shards.json's `FRONT_FIELD`, `front`, or an empty string: it must be a block record
    (`record_problem`) of files of `index` (None: not checked against files here), each a file there of its recorded
    size (one absent there the front names missing), and `FRONT_SAMPLES` of its blocks spread over it (its first and
    last among them) of their recorded digests: 1 MiB a file read, whatever its size."""
    if problem := record_problem(front):
        return problem
    block, files = front["block"], front["files"]
    if index is None or not index.is_dir():
        return ""
    for name, entry in files.items():
        path = index / name
        if not path.is_file():
            continue  # the front that reads it names it missing
        if (found := path.stat().st_size) != entry["bytes"]:
            return f"records {entry['bytes']} bytes of {name}, the index's holds {found}"
        count = len(entry["digests"])
        with open(path, "rb") as handle:
            for number in sorted({count * sample // FRONT_SAMPLES for sample in range(FRONT_SAMPLES)} | {count - 1}):
                if number < 0:
                    continue
                handle.seek(number * block)
                if block_digest(handle.read(block)) != entry["digests"][number]:
                    return f"records another {name} than the index's (block {number} differs)"
    return ""


def shard_entry(folder: Path, number: int, entry: Any, remote: Listing | None = None) -> Shard:
    """Shard `number` of shards.json, its files there at their recorded sizes and content digests (in an object
    store, `remote`: at their recorded sizes)."""
    if not isinstance(entry, dict):
        raise IndexDamage(LAYOUT_FILE, f"shard {number} is not an object")
    typed_fields(LAYOUT_FILE, entry, {"folder": (str,), "start": (int,), "stop": (int,), "files": (dict,)}, ())
    if (
        not {"folder", "start", "stop", "files"} <= entry.keys()
        or "/" in entry["folder"]
        or entry["folder"] in ("", "..")
    ):
        raise IndexDamage(LAYOUT_FILE, f"shard {number} lacks its folder, start, stop or files")
    written = tuple(file_record(number, name, record) for name, record in entry["files"].items())
    if not written:  # a split writes at least one file a shard: none listed would check nothing
        raise IndexDamage(LAYOUT_FILE, f"shard {number} lists no files")
    shard = Shard(number, folder / entry["folder"], entry["start"], entry["stop"], written=written)
    if remote is None:
        if shard.folder.is_dir():  # absent here: on some nodes' own disks (`homes` finds them)
            check_written(shard)
        return shard
    url, sizes = remote
    for name, size, _ in written:
        where = joined(url, entry["folder"], name)
        if (found := sizes.get(f"{entry['folder']}/{name}")) != size:
            raise IndexDamage(where, "is missing" if found is None else f"holds {found} bytes, shards.json {size}")
    return replace(shard, source=joined(url, entry["folder"]))


def fetched_shard(shard: Shard) -> Shard:
    """`shard` with its files on this node: as it is where it is local; from its object store into this node's
    cache (`locations.fetched_folder`), each file verified by its size and content digest, where it is remote."""
    if not shard.source:
        return shard
    try:
        return replace(shard, folder=fetched_folder(shard.source, shard.written))
    except FetchedFileMismatch as exc:
        raise IndexDamage(
            exc.url,
            f"is not the file split into shard {shard.number} (passages {shard.start}..{shard.stop - 1}): "
            f"{exc.problem} (another shard's or another split's file)",
        ) from None


def foreign_entry(folder: Path) -> str | None:
    """What in `folder`, a shards-S folder, is not a split ragbench made (its shards.json and only the shard folders
    and files it records, no link among them), or None: only such a split is replaced (`index shard --overwrite`)."""
    if folder.is_symlink() or not folder.is_dir():
        return f"{folder} is {'a symbolic link' if folder.is_symlink() else 'a file'}, not a split ragbench made"
    shards = named_files(folder)
    if isinstance(shards, str):
        return f"{folder} is not a split ragbench made (no {LAYOUT_FILE} of one: {shards})"
    for where, dirs, files in os.walk(folder, followlinks=False):
        relative = Path(where).relative_to(folder)
        for name in sorted([*dirs, *files]):
            path = relative / name
            if os.path.islink(os.path.join(where, name)) or not named(shards, path.as_posix(), name in dirs):
                return f"{folder} is not a split ragbench made alone: it holds {path}, which its {LAYOUT_FILE} does not name"
    return None


def named_files(folder: Path) -> dict[str, set[str]] | str:
    """Each shard folder the shards.json in `folder` names, with the files it names there; where that file is not
    one a split or a build in shards writes, why not (`foreign_entry`; a build into a store, `sharding.build.store`)."""
    try:
        record = read_json_object(folder, LAYOUT_FILE)
        typed_fields(LAYOUT_FILE, record, LAYOUT_TYPES, required=tuple(LAYOUT_TYPES))  # the fields a split writes
        return {entry["folder"]: set(entry["files"]) for entry in record["shards"]}
    except (IndexDamage, AttributeError, KeyError, TypeError) as exc:
        return str(exc)


def named(shards: dict[str, set[str]], path: str, folder: bool = False) -> bool:
    """Whether `path` (`/`-separated, in a shards-S folder; a `folder` there) is a file or folder its shards.json
    names (`shards`: `named_files`), or that file itself or the manifest beside it."""
    shard, _, inside = path.partition("/")
    return path in (LAYOUT_FILE, MANIFEST_FILE) or (
        shard in shards and (not inside or inside in shards[shard] or folder)
    )


def file_record(number: int, name: str, record: Any) -> tuple[str, int, str]:
    """(file, bytes, content digest) of shard `number`'s file `name` in shards.json."""
    if (
        not isinstance(record, dict)
        or not whole_number(record.get("bytes"))
        or not isinstance(record.get("digest"), str)
        or Path(name).is_absolute()
        or ".." in Path(name).parts
    ):
        raise IndexDamage(LAYOUT_FILE, f"shard {number}'s file {name!r} lacks its bytes or digest")
    return name, record["bytes"], record["digest"]


def shard_layout(kind: str, index: Path, shards: int, fix: str = "") -> Layout:
    """The checked layout of `index`'s `shards` shards, or a ConfigError naming what is wrong and the fix: `fix`
    for shards built as shards (`index build --ray --shards S`: built again), else the index split again."""
    folder = shards_folder(absolute_path(index), shards)  # a relative path is the run's, not each actor's
    hint = f"split it: ragbench index shard --index {index} --shards {shards}"
    if not folder.is_dir():
        raise ConfigError(f"retriever {kind}: {index} has no {shards} shards ({folder} missing); {fix or hint}")
    try:
        layout = read_layout(folder, index)
        if layout.retriever != kind or len(layout.shards) != shards:
            raise IndexDamage(LAYOUT_FILE, f"holds {len(layout.shards)} {layout.retriever} shards, not {shards} {kind}")
    except IndexDamage as exc:
        if problem := foreign_entry(folder):
            raise ConfigError(
                f"retriever {kind}: {folder}: {exc} (damaged), and {problem}: move it away, then {fix or hint}"
            ) from None
        raise ConfigError(f"retriever {kind}: {folder}: {exc} (damaged); {fix or hint + ' --overwrite'}") from None
    return replace(layout, fix=fix)


def built_in_shards(index: object, shards: int) -> bool:
    """Whether `index`/shards-S is an index built in shards (it holds its own manifest), not a split; at an object
    store's URL, whether that manifest is listed there (a store that cannot be read: not, and the split's front
    files, looked for next, name the problem)."""
    if not isinstance(index, (str, Path)):
        return False
    if is_remote(index):
        try:
            remote_object(joined(str(index), f"shards-{shards}", MANIFEST_FILE))
        except ConfigError:
            return False
        return True
    return (shards_folder(Path(index), shards) / MANIFEST_FILE).is_file()

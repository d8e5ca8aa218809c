"""The files of a shard build's state as its workers read and write them (`StateFiles`), by name relative to the
state's root: NNN (a shard's step-1 folder), NNN.analysed.json and NNN.finished.json (each step's record),
NNN.terms.jsonl (the part's terms), NNN.ids.npy (its passages' id hashes), terms/BBB.json and terms/BBB.merged.json
(a merged bucket and its record), shard-build.json (the build's key).

A local build's state is its building folder, which every node sees (`state`). A build into an object store keeps
it under the store's prefix INDEX/shards-S.building (`store.StoreFolder`): each task works in a scratch folder of
its own in its node's cache (`working`), fetches there what it reads, verified by the size and content digest its
record holds, puts in the store what it wrote (one PUT an object, whole or not at all; a step's record put last,
after the files it names) and removes its scratch folder. Nothing of the state then lives on one node: any machine
given the same --out resumes the build.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...._storage.files import write_atomically
from ...._storage.locations import cached_folder, fetch_into, joined, put_file, put_folder, read_object, remove_object
from ...._storage.own_trees import remove_all_but_links

BUILD_FILE = "shard-build.json"
# The format of the step files, part of the build's key: a build whose state another format wrote (an older
# ragbench's, resumed after an upgrade) starts afresh instead of reading files it would misread. Raise it with any
# change to what a step writes (2: lucene_bm25's spilled postings ordered by term, then passage; 3: records sealed).
STEPS_FORMAT = 3
IDS_SUFFIX = ".ids.npy"
TERMS_SUFFIX = ".terms.jsonl"
BUCKETS_DIR = "terms"


def damaged_state(where: str, problem: str, fix: str) -> str:
    """The line refusing an object of a build's state in a store, `where`, found damaged: what, and the fix."""
    return f"{where}: damaged state of an interrupted shard build ({problem}); {fix}, then run the command again"


class DamagedRecord(ValueError):
    """A step record that is not as ragbench wrote it: what is wrong with it."""


def seal(name: str, text: str) -> str:
    """The sha256 of a record's JSON text under its name (a record moved to another name is not that one's)."""
    return hashlib.sha256(f"{name}\0{text}".encode()).hexdigest()


def sealed(name: str, record: Any) -> dict[str, str]:
    """What a step record `name` is written as: its JSON text and that text's `seal`. A record is read back only
    where the seal matches (`StateFiles.read_record`): whatever else is found there (cut short, nested without end,
    another shape, another record's) is refused before any of it is used."""
    text = json.dumps(record)
    return {"record": text, "sha256": seal(name, text)}


def shard_name(number: int) -> str:
    return f"{number:03d}"


def record_name(number: int, step: str) -> str:
    return f"{number:03d}.{step}.json"


def terms_name(number: int) -> str:
    return f"{number:03d}{TERMS_SUFFIX}"


def ids_name(number: int) -> str:
    return f"{number:03d}{IDS_SUFFIX}"


def bucket_name(number: int) -> str:
    return f"{BUCKETS_DIR}/{number:03d}.json"


def bucket_record_name(number: int) -> str:
    return f"{BUCKETS_DIR}/{number:03d}.merged.json"


@dataclass(frozen=True)
class StateFiles:
    """A build's state: the local building folder `folder`, or the object store's prefix `url`, read and written on
    this node in its cache folder `scratch` (module docstring)."""

    folder: Path | None = None
    url: str | None = None
    scratch: str = ""

    @contextmanager
    def working(self) -> Iterator[StateFiles]:
        """These files as one task uses them: in a build into a store, in a scratch folder of its own (no other
        task on this node sees it), removed at the end; in a local build, the building folder itself."""
        if self.url is None:
            yield self
            return
        own = replace(self, scratch=f"task-{secrets.token_hex(8)}")
        try:
            yield own
        finally:
            own.cleared()

    def cleared(self) -> None:
        """The scratch folder of a build into a store removed from this node, and the URL's cache folder where no
        other task's is in it (a local build's folder stays)."""
        if self.url is None:
            return
        if self.path("").is_dir():
            remove_all_but_links(self.path(""))
        with suppress(OSError):
            self.path("").parent.rmdir()

    def path(self, name: str) -> Path:
        """Where `name` is written and read on this node: in the building folder, else in the scratch folder."""
        root = self.folder if self.url is None else cached_folder(f"shard build\0{self.url}") / self.scratch
        assert root is not None
        return root / name if name else root

    def location(self, name: str) -> str:
        """What a reader that takes a path or a URL (`read_range`, `open_for_reading`) reads `name` at."""
        return joined(self.url, name) if self.url is not None else str(self.path(name))

    def put(self, name: str) -> None:
        """`name` as this node wrote it (a file, or a folder's files) put in the store (nothing to do in a local
        build)."""
        if self.url is None:
            return
        path = self.path(name)
        put_folder(path, self.location(name)) if path.is_dir() else put_file(path, self.location(name))

    def write_json(self, name: str, value: Any) -> None:
        """`value` written whole as the JSON file `name` (then put in the store: after the files it names)."""
        self.path(name).parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path(name), json.dumps(value))
        self.put(name)

    def read_json(self, name: str) -> Any:
        """The JSON value of the file `name`; FileNotFoundError where there is none, ValueError where it is not
        whole JSON (its bytes cut short or not UTF-8, or nested deeper than Python's parser goes)."""
        if self.url is None:
            held: str | bytes = self.path(name).read_text(encoding="utf-8")
        elif (found := read_object(self.location(name))) is None:
            raise FileNotFoundError(self.location(name))
        else:
            held = found
        try:
            return json.loads(held)
        except RecursionError:
            raise ValueError("nested too deep") from None

    def write_record(self, name: str, record: Any) -> None:
        """The step record `name` written whole and sealed (`sealed`)."""
        self.write_json(name, sealed(name, record))

    def read_record(self, name: str) -> Any:
        """The step record `name` as it was written; FileNotFoundError where there is none, DamagedRecord where it
        is not the sealed record ragbench wrote under that name (`sealed`)."""
        try:
            held = self.read_json(name)
        except ValueError as exc:
            raise DamagedRecord(
                f"not a whole record ({exc if type(exc) is ValueError else type(exc).__name__})"
            ) from None
        if not isinstance(held, dict) or held.keys() != {"record", "sha256"} or not isinstance(held["record"], str):
            raise DamagedRecord("not a record ragbench wrote (not its sealed form)")
        if seal(name, held["record"]) != held["sha256"]:
            raise DamagedRecord("not the record ragbench wrote under this name (its sha256 differs)")
        return json.loads(held["record"])

    def fetched(self, files: dict[str, Any]) -> None:
        """Each of `files` (name: its record, size and content digest) brought from the store to this node and
        verified (`locations.fetch_into`: a FetchedFileMismatch naming the first that is not what was recorded);
        nothing to do in a local build."""
        if self.url is not None:
            entries = [(name, int(entry["bytes"]), entry.get("digest")) for name, entry in files.items()]
            fetch_into(self.url, entries, self.path(""))

    def removed(self, name: str) -> None:
        """The file `name` removed from the state (in the store, in a build there)."""
        if self.url is None:
            self.path(name).unlink(missing_ok=True)
        else:
            remove_object(self.location(name))

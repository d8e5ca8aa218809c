"""What a shard build's driver reads of its state (`ShardBuildState`): the steps a killed build did, kept where their
records and the files they name still match. The state is one class whatever place holds it, a local build's
`BuildFolder` or a build into an object store's `store.StoreFolder`, each a `ShardBuildState` (`state_files` names
the files).

`BuildFolder` is the folder a local build writes into, `INDEX/shards-S.building`, renamed `INDEX/shards-S` once
every shard is finished and its shards.json written (so a build cut short leaves no shards.json: nothing is served).
It is ragbench's when it holds BUILD_FILE, the build's key (the corpus's path, sizes and modification times, the
kind, its options, the shards, the text settings): a build with the same key resumes from it, one with another key
empties it first; a folder of the user's there (files, without BUILD_FILE), a link or a file is refused, never
emptied. The driver holds an OS lock on the folder (`staging.locked_folder`, as a one-index build holds its
`<out>.partial`) from before it reads it to the build's end: a second driver building into the same --out is refused
at once, and the lock goes with the driver's process however it ends. Beside each shard's folder NNN the workers
record each step done (`worker`): NNN.analysed.json (the part's statistics, the files step 1 wrote and its id hashes
NNN.ids.npy, its terms file NNN.terms.jsonl too) and NNN.finished.json (the shard's files). A step is kept only when
each file its record names is there at its size and content digest; else the shard is built again from step 1. The
middle step's buckets, terms/BBB.json, are each recorded in terms/BBB.merged.json with the parts' terms files it
merged: kept while those and its own file are the same.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...._errors import ConfigError
from ...._storage.content_digest import content_digest
from ...._storage.own_trees import remove_all_but_links
from ...index.staging import MANIFEST_FILE, locked_folder
from ..layout import LAYOUT_FILE, foreign_entry, read_layout
from .kind import Stats
from .state_files import (
    BUCKETS_DIR,
    BUILD_FILE,
    IDS_SUFFIX,
    TERMS_SUFFIX,
    DamagedRecord,
    StateFiles,
    bucket_name,
    bucket_record_name,
    ids_name,
    record_name,
    shard_name,
    terms_name,
)


class ShardBuildState(ABC):
    """A build's state, whichever place holds it (module docstring): the steps a killed build did that are kept, each
    checked against its record (`kept`, `kept_bucket`); each problem found is the place's to handle (`damaged`)."""

    files: StateFiles

    @property
    @abstractmethod
    def folder(self) -> Path:
        """The driver's folder of the state: where it writes the manifest and shards.json."""

    @abstractmethod
    def damaged(self, record: str, where: str, problem: str) -> None:
        """A record, or a file it names (`where`), found not as recorded (`problem`): the step then done again, or
        the build refused."""

    @abstractmethod
    def problem(self, where: str, entry: Any) -> str | None:
        """How the file at `where` differs from its record `entry` (None where it does not)."""

    @abstractmethod
    def finished_file(self, number: int, name: str) -> str:
        """Where shard `number`'s finished file `name` is."""

    @abstractmethod
    def held(self) -> None:
        """The build's lock confirmed held now, before a step changes the state; a ConfigError where it was lost."""

    @abstractmethod
    def discard(self) -> None:
        """The build's state removed: no build of its key can complete."""

    @abstractmethod
    def close(self) -> None:
        """What the driver holds of the state let go, at the end of the build, whether it completed or failed."""

    @abstractmethod
    def publish(self, kind: str, manifest_text: str, layout: Callable[[], str], replace: bool) -> Path | str:
        """The manifest, then shards.json (`layout()`, which digests the manifest), put where a run reads them:
        the shards' folder, or its URL."""

    def kept(self, number: int, step: str, check: bool = True) -> Any:
        """What step `step` ("analysed", "finished") of shard `number` recorded, when its files still match the
        record (not looked at without `check`: a finished shard's step-1 files are gone); None where it is not
        recorded, or is `damaged`."""
        return self.checked(record_name(number, step), lambda record: self.recorded_files(number, step, record, check))

    def checked(self, name: str, files: Callable[[Any], Mapping[str, object] | None]) -> Any:
        """The record `name` when every file `files(record)` names (where it is: its record) still matches it;
        None where it is not recorded, `files` gives None (a record of other inputs), or it is `damaged`."""
        try:
            record = self.files.read_record(name)
        except FileNotFoundError:
            return None
        except (OSError, DamagedRecord) as exc:
            return self.damaged(name, self.files.location(name), problem_of(exc))
        wanted = files(record)
        for where, entry in (wanted or {}).items():
            if (problem := self.problem(where, entry)) is not None:
                return self.damaged(name, where, problem)
        return None if wanted is None else record

    def recorded_files(self, number: int, step: str, record: Any, check: bool) -> dict[str, Any]:
        """The files (where they are: their records) a step's `record` names, checked by `kept`."""
        if step == "finished":
            return {self.finished_file(number, name): entry for name, entry in record["files"].items()}
        named = {f"{shard_name(number)}/{name}": entry for name, entry in record["files"].items()} if check else {}
        if check:
            named[ids_name(number)] = record["ids"]
        terms = record["result"].get("terms")
        if terms is not None:  # kept after step 2 too
            named[terms_name(number)] = {"bytes": terms["bytes"], "digest": terms["digest"]}
        return {self.files.location(name): entry for name, entry in named.items()}

    def kept_bucket(self, number: int, inputs: Any) -> Any:
        """The counts bucket `number`'s merge recorded, when it merged the parts' terms files `inputs` and its file
        still matches the record; None otherwise (merged again)."""
        where = self.files.location(bucket_name(number))
        record = self.checked(
            bucket_record_name(number), lambda record: {where: record["file"]} if record["inputs"] == inputs else None
        )
        return None if record is None else record["result"]

    def forget(self, number: int) -> None:
        """Shard `number`'s steps forgotten: it is built again from step 1."""
        for step in ("analysed", "finished"):
            self.files.removed(record_name(number, step))

    def ids(self, number: int) -> NDArray[np.int64]:
        """Shard `number`'s passages' id hashes, sorted (step 1 recorded them), memory-mapped."""
        entry = self.files.read_record(record_name(number, "analysed"))["ids"]
        self.files.fetched({ids_name(number): entry})
        return np.load(self.files.path(ids_name(number)), mmap_mode="r")  # type: ignore[no-any-return]

    def docs_folder(self, number: int) -> Path:
        """Shard `number`'s step-1 folder (its docs store) on this node."""
        step1 = self.files.read_record(record_name(number, "analysed"))["files"]
        self.files.fetched({f"{shard_name(number)}/{name}": entry for name, entry in step1.items()})
        return self.files.path(shard_name(number))


class BuildFolder(ShardBuildState):
    """The building folder of `target` (INDEX/shards-S) for a build of `key` (module docstring)."""

    def __init__(self, target: Path, key: Stats, out: str | Path) -> None:
        self.target = target
        self.files = StateFiles(folder=self.folder)
        record = self.folder / BUILD_FILE
        if self.folder.is_symlink() or (self.folder.exists() and not self.folder.is_dir()):
            raise ConfigError(f"{self.folder} is not a folder a shard build made; move it away, then build again")
        self.lock = locked_folder(self.folder, out, "shard build")  # before anything in it is read or emptied
        try:
            if any(self.folder.iterdir()) and not (record.is_file() and not record.is_symlink()):
                raise ConfigError(
                    f"{self.folder} holds no {BUILD_FILE}: not the state of a ragbench shard build; move it away, "
                    "then build again"
                )
            if self.recorded_key() != key:  # another build's shards: start afresh
                for child in self.folder.iterdir():
                    if child.name != BUILD_FILE and not child.is_symlink():
                        remove_all_but_links(child) if child.is_dir() else child.unlink()
            self.files.write_json(BUILD_FILE, key)
        except BaseException:
            self.close()
            raise

    @property
    def folder(self) -> Path:
        """INDEX/shards-S.building."""
        return self.target.with_name(self.target.name + ".building")

    def recorded_key(self) -> Any:
        try:
            return self.files.read_json(BUILD_FILE)
        except (OSError, ValueError):  # damaged: not this build's key (the folder is emptied)
            return None

    def finished_file(self, number: int, name: str) -> str:
        """In its building folder."""
        return self.files.location(f"{shard_name(number)}/{name}")

    def damaged(self, record: str, where: str, problem: str) -> None:
        """The record removed: its step is done again."""
        self.files.removed(record)

    def held(self) -> None:
        """Nothing to do: the kernel's lock on the folder is held until the driver's process ends."""

    def problem(self, where: str, entry: Any) -> str | None:
        return None if matches(Path(where), entry) else "not the file recorded"

    def discard(self) -> None:
        remove_all_but_links(self.folder)

    def close(self) -> None:
        """The folder's lock let go (held since the build began; over the shards once they are renamed into place)."""
        os.close(self.lock)

    def publish(self, kind: str, manifest_text: str, layout: Callable[[], str], replace: bool) -> Path:
        """The step records removed, the manifest and then shards.json (`layout()`, which digests the manifest)
        written, the folder renamed into `target` (shards already there replaced with `replace`, if ragbench made
        them), read back as a run reads it."""
        for path in self.folder.iterdir():
            if path.is_file() and not path.is_symlink() and path.name.endswith((".json", IDS_SUFFIX, TERMS_SUFFIX)):
                path.unlink()
        if (self.folder / BUCKETS_DIR).is_dir() and not (self.folder / BUCKETS_DIR).is_symlink():
            remove_all_but_links(self.folder / BUCKETS_DIR)
        (self.folder / MANIFEST_FILE).write_text(manifest_text, encoding="utf-8")
        (self.folder / LAYOUT_FILE).write_text(layout(), encoding="utf-8")
        if os.path.lexists(self.target):
            if not replace:
                raise ConfigError(f"{self.target} appeared while the shards were built; pass --overwrite")
            if self.target.is_symlink():
                self.target.unlink()
            else:
                from ...._storage.own_trees import remove_tree

                if problem := foreign_entry(self.target):
                    raise ConfigError(f"{problem}; ragbench replaces only a split it made: move it away")
                remove_tree(self.target)
        self.folder.rename(self.target)
        read_layout(self.target, self.target.parent)  # what was written is what a run reads
        return self.target


def problem_of(exc: OSError | DamagedRecord) -> str:
    """What is wrong with a step record that could not be read (`exc`), said in the line that refuses it."""
    return str(exc) if isinstance(exc, DamagedRecord) else f"not readable ({type(exc).__name__})"


def matches(path: Path, entry: Any) -> bool:
    """Whether `path` is a file (not a link) of the record's size and content digest."""
    if path.is_symlink() or not path.is_file():
        return False
    return bool(path.stat().st_size == entry["bytes"] and content_digest(path) == entry["digest"])

"""`index build --ray --shards S --out s3://.../INDEX`: the shards built straight into an object store. Each task
that finishes a shard puts its files in INDEX/shards-S/NNN (`worker.finish_part`); the driver puts the manifest,
then shards.json last (`StoreTarget.publish`): a run reads an index in a store only through its shards.json, so one
half written is never seen as whole. Shards already there are written over only with --overwrite, and only where a
build of that kind provably wrote them (`StoreTarget.check`): its shards.json, the manifest whose sha256 it records,
nothing it does not name; anything else is the user's and is refused in one line, nothing touched.

The build's state (each part's step-1 files, the step records a resumed build keeps, the merged terms, the build's
key) lives in the store too, under INDEX/shards-S.building/ (`StoreFolder`, `state_files`): no node holds any of it
once its task is done, so a build lost mid-way is resumed by the same command from any machine given the same --out.
A run never reads that prefix; the driver removes it once shards.json is published. An object of it that is not what
its record says (a record not whole JSON, a file of another size, or of another content digest when a task fetches
it) is refused in one line naming it and the fix: puts are whole, so such an object was written by something else.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...._errors import ConfigError
from ...._storage.locations import (
    RemoteFile,
    fetched_folder,
    joined,
    put_file,
    remote_files,
    remove_object,
    remove_objects,
)
from ...index.staging import MANIFEST_FILE
from ..layout import LAYOUT_FILE, manifest_sha256, named, named_files
from ..remote import remote_layout
from .kind import Stats
from .state import ShardBuildState
from .state_files import BUILD_FILE, StateFiles, damaged_state, shard_name
from .store_lock import Lease


@dataclass(frozen=True)
class StoreTarget:
    """The index's folder `url` in an object store, built in `shards` shards."""

    url: str
    shards: int

    @property
    def folder(self) -> str:
        return joined(self.url, f"shards-{self.shards}")

    def shard(self, number: int) -> str:
        return joined(self.folder, shard_name(number))

    def check(self, overwrite: bool, kind: str) -> None:
        """A ConfigError where shards of this count are there already, unless `overwrite`: then their shards.json
        is removed first, so that no run takes them for whole while they are written again. Only objects a build of
        `kind` in shards provably wrote are written over (`foreign`), as a local build's `foreign_entry` refuses a
        folder it did not make; objects with no shards.json are a lost build's only beside its state."""
        listed = remote_files(self.folder)
        if not listed:
            return
        if LAYOUT_FILE not in listed:
            if BUILD_FILE not in remote_files(self.folder + ".building"):  # not a lost build's, resumed now
                raise ConfigError(self.refusal(f"it holds {min(listed)} but no {LAYOUT_FILE} or build state"))
            return
        if not overwrite:
            raise ConfigError(
                f"--out {self.url}: {joined(self.folder, LAYOUT_FILE)} exists; pass --overwrite to build its shards "
                "again"
            )
        if problem := self.foreign(kind, listed):
            raise ConfigError(self.refusal(problem))
        remove_object(joined(self.folder, LAYOUT_FILE))

    def foreign(self, kind: str, listed: dict[str, RemoteFile]) -> str | None:
        """What of `listed` (the objects under the shards' folder) a ragbench build of `kind` in these shards did not
        write, or None: its shards.json of that kind and count, the manifest beside it of the sha256 shards.json
        records, and only the files shards.json names."""
        if MANIFEST_FILE not in listed:
            return f"it holds no {MANIFEST_FILE} beside its {LAYOUT_FILE}"
        front = [LAYOUT_FILE, MANIFEST_FILE]
        local = fetched_folder(
            self.folder, [(n, listed[n].size, None) for n in front], [listed[n].version for n in front]
        )
        shards = named_files(local)
        if isinstance(shards, str):
            return f"its {LAYOUT_FILE} is not one ragbench writes: {shards}"
        record = json.loads((local / LAYOUT_FILE).read_bytes())
        if record["index_manifest_sha256"] != manifest_sha256(local):
            return f"its {LAYOUT_FILE} records another {MANIFEST_FILE} than the one beside it"
        if (record["retriever"], len(shards)) != (kind, self.shards):
            return f"its {LAYOUT_FILE} holds {len(shards)} {record['retriever']!r} shards, not {self.shards} {kind}"
        unnamed = sorted(name for name in listed if not named(shards, name))
        return f"it holds {unnamed[0]}, which its {LAYOUT_FILE} does not name" if unnamed else None

    def refusal(self, problem: str) -> str:
        return (
            f"--out {self.url}: {self.folder}/ is not shards a ragbench build wrote ({problem}); ragbench replaces "
            "only shards it built: move its objects away, or choose another --out"
        )


class StoreFolder(ShardBuildState):
    """The state of a build of `key` into `target`: under the store's prefix
    INDEX/shards-S.building/ (module docstring): resumed where it holds the same key, emptied where it holds another's, refused where it holds
    objects but no key (not a ragbench build's)."""

    def __init__(self, target: StoreTarget, key: Stats, lease: Lease) -> None:
        self.target, self.lease = target, lease
        self.url = target.folder + ".building"
        self.files = StateFiles(url=self.url, scratch=f"driver-{secrets.token_hex(8)}")
        self.listings: dict[str, dict[str, RemoteFile]] = {}  # a folder's listing, by its URL (`problem`)
        listed = remote_files(self.url)
        if listed and BUILD_FILE not in listed:
            raise ConfigError(
                f"{self.url}/ holds no {BUILD_FILE}: not the state of a ragbench shard build; move its objects away, "
                "then build again"
            )
        if listed:
            try:
                recorded = self.files.read_json(BUILD_FILE)
            except ValueError:
                where, fix = joined(self.url, BUILD_FILE), f"remove every object under {self.url}/ (to start afresh)"
                raise ConfigError(damaged_state(where, "not a whole record", fix)) from None
            if recorded != key:  # another build's state: start afresh
                remove_objects(self.url)
            else:
                self.listings[self.url] = listed
        self.files.write_json(BUILD_FILE, key)

    def held(self) -> None:
        """The lease on the lock object renewed now (`store_lock.Lease.confirm`)."""
        self.lease.confirm()

    @property
    def folder(self) -> Path:
        """The driver's own folder of the state: where it writes the manifest and shards.json before it puts them."""
        return self.files.path("")

    def damaged(self, record: str, where: str, problem: str) -> None:
        fix = f"remove {self.files.location(record)} (that step is then done again)"
        raise ConfigError(damaged_state(where, problem, fix))

    def problem(self, where: str, entry: Any) -> str | None:
        """Checked against a listing of its folder (the state's prefix, or the shards'), taken once and taken
        again only where it does not show the file as recorded (written since: by a task the driver ran)."""
        folder = self.url if where.startswith(self.url + "/") else self.target.folder
        name = where[len(folder) + 1 :]
        found = self.listings.get(folder, {}).get(name)
        if found is None or found.size != entry["bytes"]:  # not listed yet, or perhaps written since: listed again
            self.listings[folder] = remote_files(folder)
            found = self.listings[folder].get(name)
        if found is None:
            return "missing"
        return None if found.size == entry["bytes"] else f"holds {found.size} bytes, recorded {entry['bytes']}"

    def finished_file(self, number: int, name: str) -> str:
        return joined(self.target.shard(number), name)

    def discard(self) -> None:
        """The build's state removed from the store and from this node: no build of its key can complete."""
        remove_objects(self.url)
        self.files.cleared()

    def close(self) -> None:
        """The driver's scratch folder removed from this node."""
        self.files.cleared()

    def publish(self, kind: str, manifest_text: str, layout: Callable[[], str], replace: bool) -> str:
        """The manifest, then shards.json (`layout()`, which digests the manifest) put in the store beside the
        shards the tasks put there; read back as a run reads them; the build's state then removed. (Shards there
        already were checked, and with `replace` their shards.json removed, before the build began: `StoreTarget`.)"""
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / MANIFEST_FILE).write_text(manifest_text, encoding="utf-8")
        (self.folder / LAYOUT_FILE).write_text(layout(), encoding="utf-8")
        self.held()
        put_file(self.folder / MANIFEST_FILE, joined(self.target.folder, MANIFEST_FILE))
        put_file(self.folder / LAYOUT_FILE, joined(self.target.folder, LAYOUT_FILE))
        remote_layout(kind, self.target.url, None, self.target.shards)  # every shard file listed there at its size
        self.discard()
        return self.target.folder

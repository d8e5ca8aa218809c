"""The folder a shard-parallel build writes into, `INDEX/shards-S.building`, renamed `INDEX/shards-S` once every
shard is finished and its shards.json written (so a build cut short leaves no shards.json: nothing is served).

It is ragbench's when it holds BUILD_FILE, the build's key (the corpus's path, sizes and modification times, the
kind, its options, the shards, the text settings): a build with the same key resumes from it, one with another
key empties it first; a folder of the user's there (without the file), a link or a file is refused, never
emptied. Beside each shard's folder NNN the workers record each step done (`worker`): NNN.analysed.json (the
part's statistics and the files step 1 wrote, its terms file NNN.terms.jsonl too) and NNN.finished.json (the
shard's files). A step is kept only when each file its record names is there at its size and content digest; else
the shard is built again from step 1. The middle step's buckets, terms/BBB.json, are each recorded in
terms/BBB.merged.json with the parts' terms files it merged: kept while those and its own file are the same.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..._errors import ConfigError
from ..._storage.content_digest import content_digest
from ..._storage.own_trees import remove_all_but_links
from ..index.staging import MANIFEST_FILE
from ..sharded.layout import LAYOUT_FILE, foreign_entry
from .kind import Stats
from .terms import BUCKETS_DIR, TERMS_SUFFIX
from .worker import IDS_SUFFIX

BUILD_FILE = "shard-build.json"


class BuildFolder:
    """The building folder of `target` (INDEX/shards-S) for a build of `key` (module docstring)."""

    def __init__(self, target: Path, key: Stats) -> None:
        self.target = target
        self.folder = target.with_name(target.name + ".building")
        record = self.folder / BUILD_FILE
        if self.folder.is_symlink() or (self.folder.exists() and not self.folder.is_dir()):
            raise ConfigError(f"{self.folder} is not a folder a shard build made; move it away, then build again")
        if self.folder.is_dir() and not (record.is_file() and not record.is_symlink()):
            raise ConfigError(
                f"{self.folder} holds no {BUILD_FILE}: not the state of a ragbench shard build; move it away, then "
                "build again"
            )
        if self.folder.is_dir() and self.recorded_key() != key:  # another build's shards: start afresh
            for child in self.folder.iterdir():
                if child.name != BUILD_FILE and not child.is_symlink():
                    remove_all_but_links(child) if child.is_dir() else child.unlink()
        self.folder.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(key, indent=1, ensure_ascii=False), encoding="utf-8")

    def recorded_key(self) -> Any:
        try:
            return json.loads((self.folder / BUILD_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def shard(self, number: int) -> Path:
        return self.folder / f"{number:03d}"

    def record(self, number: int, step: str) -> Path:
        return self.folder / f"{number:03d}.{step}.json"

    def kept(self, number: int, step: str, check: bool = True) -> Any:
        """What step `step` ("analysed", "finished") of shard `number` recorded, when its files still match the
        record (not looked at without `check`: a finished shard's step-1 files are gone); None otherwise (the
        record then removed: the step is done again)."""
        path = self.record(number, step)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            files = record["files"] if check else {}
            if not all(matches(self.shard(number) / name, entry) for name, entry in files.items()):
                raise ValueError("a file differs from its record")
            terms = record["result"].get("terms") if step == "analysed" else None
            if terms is not None and not matches(self.terms(number), terms):  # kept after step 2 too
                raise ValueError("its terms differ from their record")
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            path.unlink(missing_ok=True)
            return None
        return record

    def terms(self, number: int) -> Path:
        return self.folder / f"{number:03d}{TERMS_SUFFIX}"

    def bucket(self, number: int) -> Path:
        return self.folder / BUCKETS_DIR / f"{number:03d}.json"

    def bucket_record(self, number: int) -> Path:
        return self.folder / BUCKETS_DIR / f"{number:03d}.merged.json"

    def kept_bucket(self, number: int, inputs: Any) -> Any:
        """The counts bucket `number`'s merge recorded, when it merged the parts' terms files `inputs` and its file
        still matches the record; None otherwise (the record then removed: the bucket is merged again)."""
        path = self.bucket_record(number)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            if record["inputs"] != inputs or not matches(self.bucket(number), record["file"]):
                raise ValueError("the bucket differs from its record")
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            path.unlink(missing_ok=True)
            return None
        return record["result"]

    def forget(self, number: int) -> None:
        """Shard `number`'s steps forgotten: it is built again from step 1."""
        for step in ("analysed", "finished"):
            self.record(number, step).unlink(missing_ok=True)

    def repeated_across(self, shards: int) -> bool:
        """Whether two shards hold passages whose ids hash alike (each pair's sorted hashes compared, two shards'
        in memory at a time); the driver then reads those passages' ids to name them."""
        for first in range(shards):
            mine = np.load(self.ids(first))
            for other in range(first + 1, shards):
                if len(np.intersect1d(mine, np.load(self.ids(other)), assume_unique=False)):
                    return True
        return False

    def ids(self, number: int) -> Path:
        return self.folder / f"{number:03d}{IDS_SUFFIX}"

    def complete(self, manifest_text: str, layout: Callable[[], str], replace: bool) -> Path:
        """The step records removed, the manifest and then shards.json (`layout()`, which digests the manifest)
        written, the folder renamed into `target` (shards already there replaced with `replace`, if ragbench made
        them)."""
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
                from ..._storage.own_trees import remove_tree

                if problem := foreign_entry(self.target):
                    raise ConfigError(f"{problem}; ragbench replaces only a split it made: move it away")
                remove_tree(self.target)
        self.folder.rename(self.target)
        return self.target


def matches(path: Path, entry: Any) -> bool:
    """Whether `path` is a file (not a link) of the record's size and content digest."""
    if path.is_symlink() or not path.is_file():
        return False
    return bool(path.stat().st_size == entry["bytes"] and content_digest(path) == entry["digest"])

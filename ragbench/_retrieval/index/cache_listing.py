"""What the index cache holds (`ragbench index cache`): each entry of its folder, what it is, its size, and which
entries `--prune` removes.

An entry is ragbench's by what ragbench writes into it, never by its name alone: an index is a folder holding the
manifest a build writes (`index.built_index`) and named after its kind and corpus sha256, as the cache finds it; a
leftover is a folder holding the mark a build makes first and a removal makes before it renames a folder away
(`staging.BUILD_MARK`). A leftover whose build lock another process holds is a build at work, left alone. Links are
listed, never followed; anything else (a file, someone else's folder) is named and left alone.

An index is stale when neither the corpus it was last used for (`last-use.json`) nor the one its manifest says it
was built from still holds the bytes it was built from: each file is gone, or holds other bytes. Its size is compared first, so a
corpus is read only when its size still matches. An index that is not stale is damaged when its manifest, or a file
its retriever reads, is not what a build writes (`IndexedRetriever.check_files`, which a run checks as it opens the
index): listed with that file and what is wrong with it, and removed by `--prune`, so the next run builds it again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from ..._errors import ConfigError
from ..._storage.jsonl import read_json
from ..._values.json_values import JsonObject
from ..corpus.identity import corpus_bytes, corpus_sha256, corpus_state
from .built import IndexedRetriever, built_index, manifest_from
from .cache import read_use
from .damage import IndexDamage
from .removal import is_held
from .staging import BUILD_MARK, MANIFEST_FILE

if TYPE_CHECKING:
    from ..._registry import Registry


class State(Enum):
    """What an entry of the cache folder is; the value is how `ragbench index cache` says it."""

    CURRENT = "corpus as built"
    DAMAGED = "damaged"
    CHANGED = "corpus changed since: stale"
    MISSING = "corpus gone: stale"
    UNREADABLE = "corpus unreadable"
    UNKNOWN = "corpus unknown"
    LEFTOVER = "unfinished build or removal, no index"
    BUILDING = "being built by another process (its build lock is held)"
    OTHER_INDEX = "an index not named after its kind and corpus sha256, which the cache never finds"
    LINK = "a symbolic link"
    FOREIGN = "not ragbench's"


KEPT = (State.CURRENT, State.UNREADABLE)  # a corpus in either state keeps its index from `--prune`
INDEX_STATES = (State.CURRENT, State.DAMAGED, State.CHANGED, State.MISSING, State.UNREADABLE, State.UNKNOWN)
PRUNED = (State.CHANGED, State.MISSING, State.DAMAGED, State.LEFTOVER)  # what `--prune` removes
REMOVABLE = (*INDEX_STATES, State.LEFTOVER)  # what `--remove KEY` may name


@dataclass(frozen=True)
class CacheEntry:
    path: Path
    state: State
    size: int = 0  # bytes of its files, links not followed
    kind: str = ""
    corpus: str = ""  # the path of the corpus it was last used for, or built from
    last_used: str = ""  # UTC, as `last-use.json` records it; "" when no use was recorded
    damage: str = ""  # a DAMAGED index's: its file found wrong, and what is wrong with it

    @property
    def key(self) -> str:
        return self.path.name


def cache_entries(folder: Path, registry: Registry) -> list[CacheEntry]:
    """Every entry of the cache `folder`, by name; none when it does not exist. An index's files are checked
    by its retriever of the `registry` (`IndexedRetriever.check_files`)."""
    if not folder.is_dir():
        return []
    return [cache_entry(path, registry) for path in sorted(folder.iterdir(), key=lambda p: p.name)]


def cache_entry(path: Path, registry: Registry) -> CacheEntry:
    if path.is_symlink():
        return CacheEntry(path, State.LINK)
    if not path.is_dir():
        return CacheEntry(path, State.FOREIGN)
    size = folder_size(path)
    mark = path / BUILD_MARK
    if mark.is_file() and not mark.is_symlink():
        return CacheEntry(path, State.BUILDING if is_held(path) else State.LEFTOVER, size)
    if not built_index(path):
        return CacheEntry(path, State.FOREIGN, size)
    manifest = read_json(path / MANIFEST_FILE, MANIFEST_FILE)
    built_from = manifest.get("corpus") if isinstance(manifest.get("corpus"), dict) else {}
    kind = str(manifest["retriever"])
    if path.name != f"{kind}-{built_from.get('sha256')}":
        return CacheEntry(path, State.OTHER_INDEX, size, kind)
    use = read_use(path)
    known = [p for p in dict.fromkeys((use.get("corpus"), built_from.get("path"))) if isinstance(p, str) and p]
    checked = {
        corpus: corpus_check(Path(corpus), built_from.get("bytes"), str(built_from["sha256"])) for corpus in known
    }
    corpus = next((c for c, state in checked.items() if state in KEPT), known[0] if known else "")  # one that keeps
    state = checked.get(corpus, State.UNKNOWN)  # it, else the last used
    damage = index_damage(path, manifest, registry) if state in (*KEPT, State.UNKNOWN) else ""  # stale: pruned
    return CacheEntry(path, State.DAMAGED if damage else state, size, kind, corpus, use.get("used_at", ""), damage)


def index_damage(folder: Path, data: JsonObject, registry: Registry) -> str:
    """What is damaged in the index at `folder` (its manifest's JSON `data`): its manifest, or the first of its
    files its retriever finds wrong; "" when nothing is, or no installed retriever reads it."""
    try:
        manifest = manifest_from(data)
        retriever = registry.load("retrievers", manifest.retriever)
    except IndexDamage as exc:
        return str(exc)
    except ConfigError:  # a retriever not installed: its files cannot be checked
        return ""
    if not (isinstance(retriever, type) and issubclass(retriever, IndexedRetriever)):
        return ""
    try:
        retriever.check_files(folder, manifest)
    except IndexDamage as exc:
        return str(exc)
    return ""


def corpus_check(corpus: Path, size: object, sha256: str) -> State:
    """Whether `corpus` still holds the bytes an index was built from (`size` bytes of sha256 `sha256`)."""
    try:
        if not corpus.exists():
            return State.MISSING
        if isinstance(size, int) and corpus_bytes(corpus_state(corpus)) != size:
            return State.CHANGED
        return State.CURRENT if corpus_sha256(corpus) == sha256 else State.CHANGED
    except (FileNotFoundError, NotADirectoryError):  # removed while it was read
        return State.MISSING
    except OSError:
        return State.UNREADABLE
    except ConfigError:  # no longer a corpus ragbench reads
        return State.CHANGED


def folder_size(folder: Path) -> int:
    """Bytes of the files under `folder`, links counted as themselves, never followed."""
    total = 0
    for root, _, files in os.walk(folder, followlinks=False):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:  # removed meanwhile
                continue
    return total

"""`ragbench cache --remove NAME`: one entry of the caches removed, named as the listing names it (the last part of
its path) or, for an index, by its key (as `ragbench index cache` lists it).

What may be named is what ragbench made inside the caches: a converted copy of the embedded model (one holding the
SOURCE ragbench writes into each), a conversion's scratch folder whose process is gone, the hf engine's batch
sizes file, an index or leftover of the index cache. A link is never removed nor followed, nor is a folder holding
one; a whole cache (the data folder, the page cache, the index cache) is not an entry. A copy is removed while no
conversion holds its folder's lock (`embedded._saved_once`), renamed first to a conversion's scratch name of this
process, so a removal cut short leaves what `--prune` removes, never half a copy that a run would load; an index
goes as `ragbench index cache --remove` removes it (`index_removal`), refused while a build holds it."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..._engines.hf.batching import CACHE_FILE as BATCH_SIZES_FILE
from ..._engines.local.embedded import CONVERTED_NAME
from ..._errors import ConfigError, one_line_text
from ..._registry import Registry, unknown_name_message
from ..._retrieval.index.cache import index_cache_dir
from ..._retrieval.index.cache_listing import REMOVABLE, cache_entries
from ..._retrieval.index.removal import folder_held, remove_index_folder
from ..._storage.cache_root import cache_root
from ..._storage.own_trees import HoldsLink, links_in, remove_tree
from .inventory import SCRATCH, Cache, alive, read_source, unknown_entries


@dataclass(frozen=True)
class Removal:
    name: str
    path: Path
    size: int
    remove: Callable[[], None]  # OSError when it cannot be done (FolderBusy while a build or conversion holds it)
    busy: str  # what holds it when FolderBusy is raised


def removal(name: str, found: list[Cache], registry: Registry) -> Removal:
    """What `--remove name` removes; ConfigError (before anything is removed, in one line whatever the name holds)
    for a name no entry has, or one ragbench may not remove."""
    try:
        return named(name, found, registry)
    except ConfigError as exc:
        raise ConfigError(one_line_text(str(exc))) from None


def named(name: str, found: list[Cache], registry: Registry) -> Removal:
    by_name = {cache.path.name: cache for cache in found}
    cache = by_name.get(name)
    if cache is not None:
        return cache_removal(cache)
    entries = {entry.key: entry for entry in cache_entries(index_cache_dir(), registry)}
    entry = entries.get(name)
    if entry is None and name in {path.name for path in unknown_entries(found)}:
        raise ConfigError(f"--remove {name}: {cache_root() / name} is not ragbench's; left alone")
    if entry is None:
        known = [key for key, cache in by_name.items() if removable(cache)]
        known += [key for key, entry in entries.items() if entry.state in REMOVABLE]
        raise ConfigError(f"--remove: {unknown_name_message('cache entry', name, known, 'ragbench cache')}")
    if entry.state not in REMOVABLE:
        raise ConfigError(f"--remove {name}: {entry.state.value}, not an index of the index cache; left alone")
    return Removal(name, entry.path, entry.size, lambda: remove_index_folder(entry.path), "an index build writes it")


def removable(cache: Cache) -> bool:
    path = cache.path
    return not cache.link and (is_copy(path) or SCRATCH.match(path.name) is not None or is_batch_sizes(path))


def cache_removal(cache: Cache) -> Removal:
    path, name = cache.path, cache.path.name
    refused = f"--remove {name}: {path}"
    if not (path.exists() or path.is_symlink()):
        raise ConfigError(f"{refused} is not there")
    if not cache.link and not removable(cache):
        raise ConfigError(
            f"{refused} is a whole cache, not one entry of it: --prune removes what is stale in it, and --remove "
            "takes an index by the key `ragbench index cache` lists"
        )
    links = links_in(path)
    if links:
        raise ConfigError(f"--remove {name}: {links[0]} is a symbolic link, which ragbench never removes nor follows")
    scratch = SCRATCH.match(name)
    if scratch is not None:
        if alive(scratch["pid"]):
            raise ConfigError(f"{refused} is being written by the conversion of process {scratch['pid']}; left alone")
        return Removal(name, path, cache.size, lambda: remove_tree(path), "")
    if is_batch_sizes(path):
        return Removal(name, path, cache.size, path.unlink, "")
    if not read_source(path):
        raise ConfigError(f"{refused} holds no SOURCE of ragbench's: not its own copy; left alone")
    busy = "a conversion of the embedded model is at work"
    return Removal(name, path, cache.size, lambda: remove_copy(path), busy)


def is_copy(path: Path) -> bool:
    return path.name == CONVERTED_NAME or path.name.startswith(f"{CONVERTED_NAME}-plus-")


def is_batch_sizes(path: Path) -> bool:
    return path == cache_root() / BATCH_SIZES_FILE and path.is_file()


def remove_copy(copy: Path) -> None:
    """Remove a converted copy as the module says (FolderBusy while a conversion holds its folder's lock)."""
    with folder_held(copy.parent):
        links = links_in(copy)
        if links:
            raise HoldsLink(links[0])
        away = copy.with_name(f".{copy.name}.tmp-{os.getpid()}")
        os.rename(copy, away)
        remove_tree(away)

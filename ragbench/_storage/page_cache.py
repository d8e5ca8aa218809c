"""Work on documents done once: a content-addressed cache of what is derived from them.

Parsing a web page into sentences or chunks and embedding them costs far more than the LLM calls
of many systems (CRAG Task 3: 50 pages per question), and it gives the same result for the same
page whatever system, task or run asks. Entries are keyed by `content_key(kind, options...,
content)`: a hash of the content and of everything the result depends on (processing options,
library versions, the embedding model's identity), so a changed option is a miss, never a stale
hit. Values are JSON-able data or numpy arrays (no pickle: the file may be shared).

One SQLite file (WAL, ragbench._storage.sqlite_store: reads and batched writes in their own threads, safe
under concurrent runs; entries are immutable, so racing writers store the same value) shared by
every task of a run: `$RAGBENCH_PAGE_CACHE`, else `~/.cache/ragbench/pages.sqlite`; a task
option or `--page-cache PATH` names another, `off` disables it. A run opens its caches through its
own `PageCaches` (ragbench._run.lifetime.resources) and closes them when it ends: two runs in one process
each have theirs, even on the same file. Hits, misses and the file's size are reported in
results.json (`cost.page_cache`) and on the console.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, TypedDict, final

from .cache_root import cache_root
from .sqlite_store import SqliteStore
from .store_checks import Schema, StoreStats, health_lines


@final
class PageCacheStats(StoreStats):
    """A page cache's use by a run (results.json's `cost.page_cache`): its store's figures (`StoreStats`), the
    lookups, hits and hit rate (null: no lookup), and the hits and misses by kind of page."""

    lookups: int
    hits: int
    hit_rate: float | None
    by_kind: dict[str, dict[str, int]]


@final
class PageCachesStats(TypedDict):
    """Several page caches' use by a run, one entry each."""

    caches: list[PageCacheStats]


CACHE_ENV = "RAGBENCH_PAGE_CACHE"
OFF = ("off", "none", "false", "0")
LABEL, FIX = "page cache", "--page-cache PATH names a file that can be written, --page-cache off turns it off"
SCHEMA = Schema("entries", "key TEXT PRIMARY KEY, value BLOB, created REAL")


def default_path() -> Path:
    return Path(os.environ.get(CACHE_ENV) or cache_root() / "pages.sqlite")


def content_key(kind: str, *parts: str | bytes) -> str:
    """`kind:` + sha256 of the parts (length-prefixed, so ("ab", "c") and ("a", "bc") differ)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return f"{kind}:{digest.hexdigest()}"


def encode_value(value: Any) -> bytes:
    numpy = sys.modules.get("numpy")  # an array comes only from a process that imported numpy: a run may not
    if numpy is not None and isinstance(value, numpy.ndarray):
        buffer = io.BytesIO()
        numpy.save(buffer, value, allow_pickle=False)
        return b"N" + buffer.getvalue()
    return b"J" + json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def decode_value(blob: bytes) -> Any:
    if blob[:1] == b"N":
        import numpy as np

        return np.load(io.BytesIO(blob[1:]), allow_pickle=False)
    return json.loads(blob[1:].decode("utf-8", "surrogatepass"))


class PageCache:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._store = SqliteStore(
            self.path,
            SCHEMA,
            "value",
            encode=lambda key, value: (key, encode_value(value), time.time()),
            decode=decode_value,
            from_item=lambda value: value,
            label=LABEL,
            fix=FIX,
        )
        self.hits: Counter[str] = Counter()
        self.misses: Counter[str] = Counter()

    async def get_many(self, keys: list[str]) -> list[Any | None]:
        """Values for `keys` (None: not cached), read and decoded in the cache's thread."""
        values = await self._store.get_many(keys)
        for key, value in zip(keys, values):
            (self.misses if value is None else self.hits)[key.split(":", 1)[0]] += 1
        return values

    def put_many(self, items: list[tuple[str, Any]]) -> None:
        """Store (key, value) pairs; encoded and committed by the writer thread."""
        self._store.put(items)

    def stats(self) -> PageCacheStats:
        kinds = sorted(set(self.hits) | set(self.misses))
        hits, looked = sum(self.hits.values()), sum(self.hits.values()) + sum(self.misses.values())
        return {
            **self._store.stats(),
            "lookups": looked,
            "hits": hits,
            "hit_rate": round(hits / looked, 4) if looked else None,
            "by_kind": {kind: {"hits": self.hits[kind], "misses": self.misses[kind]} for kind in kinds},
        }

    def close(self) -> None:
        self._store.close()


class PageCaches:
    """The page caches one run opened: one instance per file, shared by the run's tasks and systems,
    closed together when the run ends."""

    def __init__(self, default: str | None = None) -> None:
        self.default = default  # the run's --page-cache (None: $RAGBENCH_PAGE_CACHE or ~/.cache/ragbench/pages.sqlite)
        self._lock = threading.Lock()
        self._open: dict[Path, PageCache] = {}

    def open(self, path: str | Path | None = None) -> PageCache | None:
        """The cache at `path` (a task option), else the run's, else the default; None when the path is
        `off`. File work: call it from a thread when a loop is running."""
        chosen = path if path is not None else self.default
        if chosen is not None and str(chosen).strip().lower() in OFF:
            return None
        resolved = Path(chosen).expanduser().resolve() if chosen else default_path().expanduser().resolve()
        with self._lock:
            cache = self._open.get(resolved)
            if cache is None:
                cache = self._open[resolved] = PageCache(resolved)
            return cache

    def report(self) -> PageCacheStats | PageCachesStats | None:
        """Every cache the run used: one entry, or a list of them."""
        with self._lock:
            caches = list(self._open.values())
        used = [cache.stats() for cache in caches if cache.hits or cache.misses]
        if not used:
            return None
        return used[0] if len(used) == 1 else {"caches": used}

    def close(self) -> None:
        """Flush and close every cache the run opened."""
        with self._lock:
            caches = list(self._open.values())
            self._open.clear()
        for cache in caches:
            cache.close()


def console_line(stats: PageCacheStats | PageCachesStats | None, notices: bool = True) -> str | None:
    """One line per cache for the console: hits of lookups, hit rate, size on disk (`health_lines`)."""
    if not stats:
        return None
    lines = []
    for cache in stats["caches"] if "caches" in stats else [stats]:  # noqa: SIM401 (`in` narrows the union)
        rate = "" if cache["hit_rate"] is None else f" ({cache['hit_rate']:.0%})"
        lines.append(
            f"page cache {cache['path']}: {cache['hits']}/{cache['lookups']} hits{rate}, {cache['bytes'] / 1e6:.1f} MB"
        )
        lines += health_lines("page cache", cache, notices)
    return "\n".join(lines)

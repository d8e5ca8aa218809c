"""Indexes ragbench builds itself, on first use, of a corpus a task ships (ragbench._task.protocols.OwnCorpus).

They live in `$RAGBENCH_INDEX_CACHE`, else `~/.cache/ragbench/indexes`, one folder per retriever kind and
corpus content (`bm25-<sha256 of the corpus bytes>`): an edited corpus gets an index of its own, a moved one
finds its index again, and the corpus file is only ever read. The build is `ragbench index build`'s
(`build_index`: staged in `<folder>.partial`, renamed when complete), so a killed build leaves no index.
Each use writes `last-use.json` into the index folder (the corpus path it was used for and when, UTC), so that
`ragbench index cache` can tell which indexes no corpus has those bytes any more
(ragbench._retrieval.index.cache_listing); the folder's name alone finds an index, so an index written before this file
existed is found all the same.
"""

from __future__ import annotations

import json
import logging
import os
import time
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

from ..._errors import ConfigError
from ..._storage.cache_root import cache_root
from ..._storage.files import replacing
from ..corpus.identity import corpus_sha256
from .building import build_index
from .built import built_index

if TYPE_CHECKING:
    from ..._registry import Registry

INDEX_CACHE_ENV = "RAGBENCH_INDEX_CACHE"
USE_FILE = "last-use.json"
log = logging.getLogger(__name__)


def index_cache_dir() -> Path:
    """The cache's folder (made on its first build); a file in its place is refused, naming where it was set."""
    configured = os.environ.get(INDEX_CACHE_ENV)
    folder = Path(configured or cache_root() / "indexes").expanduser()
    if folder.exists() and not folder.is_dir():
        origin = f"${INDEX_CACHE_ENV}={configured}" if configured else f"the index cache {folder}"
        raise ConfigError(f"{origin}: is a file, not a folder; set ${INDEX_CACHE_ENV} to a folder")
    return folder


def index_folder(corpus: Path, kind: str) -> Path:
    """Where the cache keeps the `kind` index of `corpus`'s bytes (built or not)."""
    return index_cache_dir() / f"{kind}-{corpus_sha256(corpus)}"


def cached_index(corpus: Path, kind: str, *, registry: Registry, folder: Path | None = None) -> Path:
    """The folder of a `kind` index of `corpus` (built with the retriever's defaults), built there first if
    the cache has none. `folder`: the one `index_folder` already named for it (the corpus is not hashed again;
    a build of bytes that no longer have its sha256 is refused)."""
    folder = folder if folder is not None else index_folder(corpus, kind)
    if not built_index(folder):
        log.warning("building the %s index of %s (first use; cached in %s)", kind, corpus.name, folder)
        named = folder.name.removeprefix(f"{kind}-")
        try:
            build_index(corpus, folder, kind, progress=False, registry=registry, named_sha256=named)
        except ConfigError:
            if not built_index(folder):  # not another run's build of the same corpus, finished meanwhile
                raise
    record_use(folder, corpus)
    return folder


class IndexUse(TypedDict, total=False):
    """A cached index's `USE_FILE`: the corpus it was last used for (absolute) and when (UTC, ISO 8601)."""

    corpus: str
    used_at: str


def record_use(folder: Path, corpus: Path) -> None:
    """Write `folder`'s `USE_FILE`: `corpus` (absolute) and now. A cache that cannot be written (read-only) still
    serves its indexes: the use goes unrecorded."""
    use: IndexUse = {"corpus": str(corpus.resolve()), "used_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with suppress(OSError), replacing(folder / USE_FILE) as handle:
        handle.write((json.dumps(use, ensure_ascii=False) + "\n").encode("utf-8"))


def read_use(folder: Path) -> IndexUse:
    """What `record_use` last wrote in `folder` ({} when nothing was, or the file is not its)."""
    path = folder / USE_FILE
    if path.is_symlink() or not path.is_file():
        return {}
    try:
        use = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if isinstance(use, dict) and all(isinstance(use.get(key), str) for key in ("corpus", "used_at")):
        return cast(IndexUse, use)  # both its fields checked
    return {}

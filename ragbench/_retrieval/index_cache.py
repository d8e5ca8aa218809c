"""Indexes ragbench builds itself, on first use, of a corpus a task ships (ragbench._task.protocols.OwnCorpus).

They live in `$RAGBENCH_INDEX_CACHE`, else `~/.cache/ragbench/indexes`, one folder per retriever kind and
corpus content (`bm25-<sha256 of the corpus bytes>`): an edited corpus gets an index of its own, a moved one
finds its index again, and the corpus file is only ever read. The build is `ragbench index build`'s
(`build_index`: staged in `<folder>.partial`, renamed when complete), so a killed build leaves no index.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import ConfigError
from .index import build_index, built_index, corpus_sha256

if TYPE_CHECKING:
    from .._registry import Registry

INDEX_CACHE_ENV = "RAGBENCH_INDEX_CACHE"
log = logging.getLogger(__name__)


def index_cache_dir() -> Path:
    return Path(os.environ.get(INDEX_CACHE_ENV) or Path.home() / ".cache" / "ragbench" / "indexes").expanduser()


def index_folder(corpus: Path, kind: str) -> Path:
    """Where the cache keeps the `kind` index of `corpus`'s bytes (built or not)."""
    return index_cache_dir() / f"{kind}-{corpus_sha256(corpus)}"


def cached_index(corpus: Path, kind: str, *, registry: Registry) -> Path:
    """The folder of a `kind` index of `corpus` (built with the retriever's defaults), built there first if
    the cache has none."""
    folder = index_folder(corpus, kind)
    if built_index(folder):
        return folder
    log.warning("building the %s index of %s (first use; cached in %s)", kind, corpus.name, folder)
    try:
        build_index(corpus, folder, kind, progress=False, registry=registry)
    except ConfigError:
        if not built_index(folder):  # not another run's build of the same corpus, finished meanwhile
            raise
    return folder

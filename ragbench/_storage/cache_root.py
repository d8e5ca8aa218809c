"""Where ragbench keeps what it makes outside a run folder: `$RAGBENCH_CACHE_DIR`, else ~/.cache/ragbench.

Every cache derives its default from this folder (the data folder, the page cache, the index cache, the
embedded model's converted copies, the hf engine's batch sizes); each of the first three has its own variable
too. `ragbench cache` lists them all."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "RAGBENCH_CACHE_DIR"


def cache_root() -> Path:
    """ragbench's cache folder: $RAGBENCH_CACHE_DIR, else ~/.cache/ragbench (public: `ragbench.api.data`)."""
    return Path(os.environ.get(CACHE_DIR_ENV) or Path.home() / ".cache" / "ragbench").expanduser()

"""Pages encoded as the one-process index build encodes them: `batch_size` pages a forward pass, each batch's
vectors pooled by colpali-engine's pooler where asked (`pool_factor`); a shard of a sharded build encodes its
pages so too (`shards`). Before a page model loads, the torchvision transformers would import is checked
(`check_torchvision`)."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from typing import Any

from ..._errors import ConfigError
from ..._imports import import_extra, root_error
from .page_set import PageSet

INSTALL = "pip install 'ragbench[vision]'"
CPU_WHEELS = "https://download.pytorch.org/whl/cpu"


def check_torchvision(who: str) -> None:
    """A ConfigError, one line naming the error and the fix, where torchvision is installed but does not load.
    transformers imports it for its image processors wherever it is installed (Qwen2-VL's, which colpali-engine
    imports, always), and reports its failure as a class it could not import. PyPI's torchvision wheels are built
    against PyPI's torch (a CUDA build on Linux): beside a CPU torch (`2.13.0+cpu`, PyTorch's CPU wheels, the one these
    machines carry) its compiled operators do not load ("operator torchvision::nms does not exist")."""
    if importlib.util.find_spec("torchvision") is None:
        return
    try:
        importlib.import_module("torchvision")
    except Exception as exc:  # what a broken torchvision raises as it is imported: RuntimeError, OSError, ImportError
        versions = {name: version_of(name) for name in ("torchvision", "torch")}
        raise ConfigError(
            f"{who}: torchvision {versions['torchvision']} does not load beside torch {versions['torch']} "
            f"({root_error(exc)}): its wheel is built for another torch build; "
            f"install the torchvision built for this torch (for a CPU torch: pip install torchvision --index-url "
            f"{CPU_WHEELS}), or the CUDA pair PyPI has, which runs on the CPU too: pip install 'torch===2.13.0' "
            "torchvision==0.28.0"
        ) from None


def version_of(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "(no version)"


def encoded_pages(corpus: PageSet, encoder: Any, start: int, stop: int, batch_size: int, pool_factor: int) -> list[Any]:
    """The vectors of pages start..stop-1, encoded `batch_size` pages at a time from `start` and pooled by the batch."""
    vectors: list[Any] = []
    for first in range(start, stop, batch_size):
        images = [corpus.decoded(i) for i in range(first, min(first + batch_size, stop))]
        vectors.extend(pooled(encoder.encode_pages(images), pool_factor))
    return vectors


def pooled(pages: list[Any], pool_factor: int) -> list[Any]:
    """Each page's vectors pooled by colpali-engine's HierarchicalTokenPooler (`pool_factor` 1: as they are)."""
    if pool_factor == 1:
        return pages
    pooling = import_extra("colpali_engine.compression.token_pooling", f"token pooling is colpali-engine's: {INSTALL}")
    return list(pooling.HierarchicalTokenPooler().pool_embeddings(pages, pool_factor=pool_factor))

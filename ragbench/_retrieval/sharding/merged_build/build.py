"""`ragbench index build --ray`: `index.build_index` with its passages analysed by a pool of Ray actors
(`feeder`), the index the very one a one-process build writes; with `shards`, split as `ragbench index shard` splits
it, for `--retriever-arg shards=S`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...._errors import ConfigError
from ...._ray_connect import check_address
from ...corpus.identity import corpus_state
from ...corpus.readers import corpus_format
from ...index.building import build_index
from ...index.built import Manifest
from ..kind import BuildsBlocks
from ..kind_lookup import sharded_kind, sharded_kinds
from .feeder import RayFeeder
from .state import remove_state

if TYPE_CHECKING:
    from ...._registry import Registry


@dataclass
class ParallelBuild:
    manifest: Manifest
    reused: int  # blocks an interrupted build had written
    analysed: int  # blocks the workers analysed
    shards: Path | None  # the shards' folder (`sharding.layout`), with `shards`


def build_parallel(
    corpus: str | Path,
    out: str | Path,
    kind: str,
    options: dict[str, Any],
    *,
    ray_address: str | None,
    workers: int | None,
    shards: int | None,
    registry: Registry,
    **build: Any,
) -> ParallelBuild:
    """`build_index(corpus, out, kind, options, **build)` on Ray (module docstring); `ray_address` "" or None: the
    RAY_ADDRESS variable's Ray, else one of this process's own."""
    kind = registry.entry("retrievers", kind).name
    parts = sharded_kind(registry, kind)
    if not isinstance(parts, BuildsBlocks):
        built = ", ".join(known.name for known in sharded_kinds(registry) if isinstance(known, BuildsBlocks))
        raise ConfigError(f"--ray builds {built} indexes, not {kind}; build it without --ray")
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers {workers}: must be at least 1")
    if shards is not None and shards < 1:  # a kind with blocks can be split (it `Splits` too)
        raise ConfigError(f"--shards {shards}: must be at least 1")
    try:
        import ray
    except ImportError:
        raise ConfigError("index build --ray needs Ray: pip install 'ragbench[ray]'") from None
    given, _, _ = check_address(ray_address, "--ray ")  # refused before any work: ray.init would wait minutes
    cpus = os.cpu_count() or 1
    starts_own = given in (None, "local") and not ray.is_initialized()  # a Ray of this machine, started for the build
    if starts_own and not parts.gpu and workers is not None and workers > cpus:
        # it has at most the machine's CPUs (fewer under a cgroup limit: the feeder's check, on Ray); said before it starts
        raise ConfigError(
            f"--workers {workers}: a Ray of this machine has at most its {cpus} CPUs and a worker actor takes one; "
            f"pass --workers {cpus} or fewer, or give a cluster's address (--ray HOST:6379)"
        )
    corpus, out = Path(corpus), Path(out)
    corpus_format(corpus)  # a missing or unknown corpus refused before the key reads its files
    key = {
        "retriever": kind,
        "options": options,
        "corpus": str(corpus.resolve()),
        "corpus_files": [list(entry) for entry in corpus_state(corpus)],
        **{name: build.get(name) for name in ("chunk_size", "title", "split", "split_header")},
        "model_files": parts.key_files(options),
    }
    feeder = RayFeeder(parts, out, key, ray_address, workers, registry)
    try:
        manifest = build_index(corpus, out, kind, options, registry=registry, feeder=feeder, **build)
    finally:
        feeder.close()
    remove_state(out)  # the index is complete: its blocks are no longer needed
    split = None
    if shards is not None:
        from ..split import split_index

        split = split_index(out, shards, registry=registry)  # `out` is the index just built: nothing was split from it
    return ParallelBuild(manifest, feeder.reused, feeder.analysed, split)

"""A page index encoded in shards (`ragbench index build --retriever colpali --ray --shards S`): each shard's pages
encoded by a worker (a Ray task; `sharding.build.runner`, the runner of the text kinds' shard builds), its vectors
written to a part file, the parts then joined into the one index `index.save_index` writes: the same vectors, bit
for bit, as the one-process build's, so the same scores and ranking.

A page's vectors depend on its encoding batch (colpali-engine pads a batch's items to its longest, and the index
keeps the padding rows; the pooler pools a batch's pages), so the shards are cut on the one-process build's batch
boundaries (`batch_ranges`): shard i encodes the same batches of `batch_size` pages, with the same encoder and
pooling. Each worker opens the pages and loads the model itself (`PageRecipe`); the part files go to a staging
folder beside the index (INDEX.shards-partial, on a file system every node sees), which a build killed mid-way
keeps: the same command again encodes only the shards whose part is missing or damaged.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._errors import ConfigError
from ..._values.json_values import JsonObject
from .corpus import PageCorpus
from .encoding import encoded_pages
from .index import read_vectors, write_vectors
from .page_set import PageSet

if TYPE_CHECKING:
    from ..sharding.build.runner import Runner

KEY = "key.json"  # what the parts in the staging folder were encoded for (the index's identity, the shards)


@dataclass(frozen=True)
class PageRecipe:
    """What a worker needs to encode pages as the one-process build does: what opens the pages (a picklable
    callable: `corpus.open_pages` of their folder and split), their name in the progress, the batch size, the
    pooling and what loads the encoder (a picklable callable: the model's class and folder)."""

    pages: Callable[[], PageCorpus]
    name: str
    batch_size: int
    pool_factor: int
    encoder: Callable[[], Any]


def batch_ranges(count: int, batch_size: int, shards: int) -> list[tuple[int, int]]:
    """The pages of each of `shards` shards, whole batches of `batch_size` each, as even as batches allow."""
    batches = -(-count // batch_size)
    if shards > batches:
        raise ConfigError(
            f"--shards {shards}: the {count} pages make {batches} batches of batch_size={batch_size}, each encoded "
            "whole by one shard; choose at most that many shards"
        )
    cuts = [batches * number // shards * batch_size for number in range(shards)] + [count]
    return list(zip(cuts, cuts[1:]))


def encode_part(recipe: PageRecipe, start: int, stop: int, path: str) -> int:
    """A worker's shard: pages start..stop-1 encoded and written to `path` (renamed into place whole); their count."""
    corpus = PageSet(recipe.pages())
    vectors = encoded_pages(corpus, recipe.encoder(), start, stop, recipe.batch_size, recipe.pool_factor)
    written = Path(path + ".tmp")
    write_vectors(written, vectors)
    os.replace(written, path)
    return len(vectors)


def given(encoder: Any) -> Any:
    """An encoder handed over as it is (a recipe's `encoder` where the caller built one)."""
    return encoder


@dataclass
class PageShards:
    """A page index encoded in `shards` shards on the runner `runner()` starts (None: this process), each
    shard's progress counted on stderr with `progress`; `kept` the shards a killed build had encoded."""

    shards: int
    runner: Callable[[], Runner] | None = None
    progress: bool = False
    gpu: bool = False
    kept: int = field(default=0, init=False)

    def vectors(self, recipe: PageRecipe, count: int, index: Path, identity: JsonObject) -> list[Any]:
        """The pages' vectors, encoded in shards (module docstring), for the index at `index`."""
        from ..sharding.build.driver import Shown  # the shard builds' (their imports: only a build pays them)
        from ..sharding.build.runner import InProcess

        ranges = batch_ranges(count, recipe.batch_size, self.shards)
        staging = index.with_name(index.name + ".shards-partial")
        key = {"identity": identity, "ranges": [list(pages) for pages in ranges]}
        parts = [staging / f"part-{number:03d}.safetensors" for number in range(self.shards)]
        if read_key(staging) != key:
            cleared(staging)
            staging.mkdir(parents=True, exist_ok=True)
            (staging / KEY).write_text(json.dumps(key, indent=2) + "\n", encoding="utf-8")
        done = [read_part(path, stop - start) for path, (start, stop) in zip(parts, ranges)]
        self.kept = sum(part is not None for part in done)
        calls = [
            (recipe, start, stop, str(path)) for path, (start, stop), part in zip(parts, ranges, done) if part is None
        ]
        on = (self.runner or InProcess)()
        try:
            steps = Shown(on, recipe.name, str(identity["kind"]), self.shards, self.progress)
            steps.map("pages encoded", encode_part, calls, gpu=self.gpu)
        finally:
            on.close()
        vectors: list[Any] = []
        for path, part, (start, stop) in zip(parts, done, ranges):
            found = part if part is not None else read_part(path, stop - start)
            if found is None:
                raise ConfigError(f"index build: {path}, written by its shard, does not read back; build again")
            vectors.extend(found)
        return vectors

    def close(self, index: Path) -> None:
        """The staging folder of the index at `index` removed, once the index is in place."""
        cleared(index.with_name(index.name + ".shards-partial"))


def read_key(staging: Path) -> Any:
    try:
        return json.loads((staging / KEY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_part(path: Path, pages: int) -> list[Any] | None:
    """The vectors of a shard's part file where it holds its `pages` pages whole; None where it is missing or damaged."""
    try:
        vectors = read_vectors(path)
    except ValueError:
        return None
    return vectors if len(vectors) == pages else None


def cleared(staging: Path) -> None:
    """The staging folder's own files removed (its key and parts), then the folder where nothing else is in it."""
    for path in [staging / KEY, *staging.glob("part-*.safetensors"), *staging.glob("part-*.safetensors.tmp")]:
        path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        staging.rmdir()

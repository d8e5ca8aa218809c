"""Components by their catalogue names, as a run finds them: the registry of the installed plugins, an engine
made from its `engine:model` (`--model`), an index built (in shards too) and a retriever made by the name of its
kind (`ragbench index --kind`, `--retriever`); the shipped model's folder (`embedded_model`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._engines import load_engine as _load_engine
from .._engines.base import Engine
from .._engines.local.embedded import embedded_safetensors_dir
from .._registry import Registry, installed_registry
from .._retrieval import load_retriever as _load_retriever
from .._retrieval.base import Retriever
from .._retrieval.index.building import build_index as _build_index
from .._retrieval.index.built import Manifest

if TYPE_CHECKING:
    from .._retrieval.sharding.build.driver import ShardBuild


def _or_installed(registry: Registry | None) -> Registry:
    return installed_registry() if registry is None else registry


def load_engine(model: str | None, *, registry: Registry | None = None, **options: Any) -> Engine:
    """The engine of `--model ENGINE:MODEL` with these `--model-arg`s (`scripted:echo`, `replay:calls.jsonl`,
    `openai:gpt-4o-mini` with `base_url=...`), its class `registry`'s (default: `installed_registry()`); a bad
    option is a `ConfigError`. Its `generate(requests)` answers a batch directly, without a run's scheduler."""
    return _load_engine(model, registry=_or_installed(registry), **options)


def build_index(
    corpus: str | Path,
    out: str | Path,
    kind: str,
    options: Mapping[str, object] | None = None,
    *,
    registry: Registry | None = None,
    **build: Any,
) -> Manifest:
    """A `kind` index of `corpus` built into `out`, as `ragbench index --kind KIND` builds it (it appears there only
    once complete): `options` are the builder's (`--option`), `build` the command's own (`chunk_size`, `title`,
    `overwrite`, `progress`, `split`, `split_header`). The builder is `registry`'s (default: a new registry of the
    installed plugins, `installed_registry()`). Returns the index's manifest (`retriever`, `doc_count`,
    `bad_records`, `options` ...)."""
    return _build_index(corpus, out, kind, _own(options), registry=_or_installed(registry), **build)


def build_shards(
    corpus: str | Path,
    out: str | Path,
    kind: str,
    options: Mapping[str, object] | None,
    shards: int,
    *,
    registry: Registry | None = None,
    **build: Any,
) -> ShardBuild:
    """A `kind` index of `corpus` built as `shards` shards into `out`/shards-S, as `ragbench index build --ray
    --shards S` builds it (a kind that `BuildsShards`), its steps run in this process unless `build` names another
    `runner`; `build` also takes the command's `text` settings, `overwrite` and `progress`. Returns the build's
    `manifest`, `folder` and `kept` (the shards whose steps a killed build had done)."""
    from .._retrieval.sharding.build.driver import build_shards as _build_shards

    return _build_shards(corpus, out, kind, _own(options) or {}, shards, registry=_or_installed(registry), **build)


def load_retriever(
    kind: str | None, options: Mapping[str, object] | None = None, *, registry: Registry | None = None
) -> Retriever:
    """The retriever a run with `--retriever KIND` and these `--retriever-arg`s searches (`provided`, an example's
    own documents, when `kind` is None), its class `registry`'s (default: `installed_registry()`)."""
    return _load_retriever(kind, _own(options), registry=_or_installed(registry))


def embedded_model() -> Path:
    """The folder of the shipped SmolLM2-135M-Instruct (`hf:embedded`) as transformers saves a model: its weights as
    safetensors and its tokenizer, converted from the packaged GGUF on first use into ragbench's cache
    ($RAGBENCH_CACHE_DIR, else ~/.cache/ragbench) and read from there after. What `vllm:embedded` loads; for a
    plugin's tests, a real small model and tokenizer (`AutoTokenizer.from_pretrained(embedded_model())`)."""
    return embedded_safetensors_dir()


__all__ = [
    "Registry",
    "build_index",
    "build_shards",
    "embedded_model",
    "installed_registry",
    "load_engine",
    "load_retriever",
]


def _own(options: Mapping[str, object] | None) -> dict[str, object] | None:
    """The caller's options as a dict of the component's own (the caller's mapping is never changed)."""
    return None if options is None else dict(options)

"""Retrieval: retrievers behind one batched interface, corpus readers and on-disk indexes.

Here the interface (`base`), the handle a system awaits (`handle`) and the retrievers without an index (`provided`,
`example_passages`, `replay`); by family: pyserini's BM25 (`lucene/`), bm25s's (`bm25/`), dense retrieval (`dense/`),
the corpora (`corpus/`), on-disk indexes and their cache (`index/`), TREC's formats (`trec/`), and the scale-out of
a corpus over processes and machines (`sharding/`).

Retrievers are plugins (the `retrievers` catalogue section), and so are the dense encoder's query
styles (`ragbench_query_styles`; the core serves only `default`); this module stays light (no bm25s,
no torch, not even the retrievers' base classes and the corpus readers) so that `ragbench list` never imports them
and a command's start does not wait on them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._builtin import section
from .._errors import ConfigError
from .._hookspecs import NamedTarget, hookimpl
from .._storage.locations import is_remote
from .._values.urls import redact_url

if TYPE_CHECKING:
    from .._registry import Registry
    from .._values.json_values import JsonObject
    from .base import Retriever

DEFAULT_RETRIEVER = "provided"


@hookimpl
def ragbench_catalog() -> JsonObject:
    return {**section("retrievers", "rerankers", "refiners")}  # rerankers and refiners: ragbench._components


@hookimpl
def ragbench_query_styles() -> dict[str, NamedTarget]:
    return section("query_styles")["query_styles"]


def load_retriever(name: str | None, args: dict[str, Any] | None = None, *, registry: Registry) -> Retriever:
    """Build a retriever by catalogue name (`provided` when none is given) with its options, its class
    from the run's `registry`, which a retriever whose
    `__init__` takes `registry` is given too (e.g. dense, for its query style)."""
    from .._plugin_calls import exception_line
    from .._values.options import construct

    name = name or DEFAULT_RETRIEVER
    if "shards" in (args or {}):  # the index served through its shards on Ray (ragbench._retrieval.sharding)
        from .sharding.retriever import sharded_retriever

        return sharded_retriever(name, dict(args or {}), registry=registry)
    entry = registry.entry("retrievers", name)
    index = (args or {}).get("index")
    if isinstance(index, str) and is_remote(index) and _served_in_shards(registry, entry.name):
        raise ConfigError(  # its retriever would read the URL as a local path (`s3:/bucket/...`)
            f"retriever {name}: --retriever-arg index={redact_url(index)}: an index in an object store is served through its "
            "shards: add --retriever-arg shards=S (S: the number of its shards-S folder)"
        )
    try:
        retriever: Retriever = construct(
            entry.load(), dict(args or {}), f"retriever {name}", injected={"registry": registry}
        )  # an instance of the registered Retriever subclass
    except Exception as exc:
        if not opening_fault(exc):
            raise
        raise ConfigError(
            f"--retriever {name} (from {entry.source}) failed to open: {exception_line(exc)}; fix what it names (its "
            "index, its server, its --retriever-arg options) or tell its provider"
        ) from exc
    return retriever


def opening_fault(exc: Exception) -> bool:
    """Whether `exc`, raised as a retriever opened, is said as the retriever's in one line (`load_retriever`): not
    a ConfigError (said as it is), the run's own stop, a memory or file error of the machine (said as such), but any
    other fault of the retriever's code (a RuntimeError, a server's refused connection)."""
    from .._plugin_calls import is_plugin_fault

    if isinstance(exc, (ConfigError, MemoryError)) or (isinstance(exc, OSError) and exc.filename is not None):
        return False
    return is_plugin_fault(exc)


def _served_in_shards(registry: Registry, name: str) -> bool:
    """Whether retriever `name`'s index is served through its shards (its catalogue entry names a ShardedKind);
    imported only for an index in a store, so a run over provided documents loads no index code."""
    from .sharding.kind_lookup import sharded_kind

    return sharded_kind(registry, name) is not None

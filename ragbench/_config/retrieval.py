"""What a run's system searches with (`RunRetrieval`): its retriever, reranker and refiner and the cache of
parsed pages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .run_option import SCORED, option, pairs


def _component_args(name: str, example: str, identity: str = "when_given", reproduce: str = "") -> Any:
    """A retrieval component's --NAME-arg (`reproduce`: reproduce's wording of it)."""
    return pairs(
        f"--{name}-arg",
        "K=V",
        f"{name} option, e.g. {example}",
        identity=identity,
        offers={"reproduce": {"help": reproduce} if reproduce else {}},
    )


@dataclass(frozen=True)
class RunRetrieval:
    """What a run's system searches with: the retriever, the reranker and the refiner, each with its options, and
    the cache of parsed pages. Its components are checked with the registry
    (ragbench._components.check_components)."""

    retriever: str | None = option(  # ctx.retriever of systems; None: the examples' provided docs
        None, help="retriever for ctx.retriever (ragbench list retrievers; default: provided)"
    )
    retriever_args: dict[str, object] = _component_args(
        "retriever",
        "index=DIR",
        "always",
        reproduce="option of the row's retriever: its folders (index=DIR, a row's retriever_paths) are no "
        "substitution, its other options are",
    )
    shipped_corpus_index: bool = option(False, identity="never")  # retriever_args' index is the index cache's own
    reranker: str | None = option(  # reorders every search's results (ragbench._components)
        None, help="reranks every search's results (ragbench list rerankers)", identity="when_given"
    )
    reranker_args: dict[str, object] = _component_args(
        "reranker", "model=DIR", reproduce="option of the row's reranker, e.g. model=DIR"
    )
    refiner: str | None = option(  # turns a reader's documents into what it shows
        None, help="refines the documents a reader shows (ragbench list refiners)", identity="when_given"
    )
    refiner_args: dict[str, object] = _component_args(
        "refiner", "model=DIR", reproduce="option of the row's refiner, e.g. model=DIR"
    )
    page_cache: str | None = option(  # parsed pages and embeddings (ragbench._storage.page_cache); "off" disables it
        None,
        metavar="PATH|off",
        help="cache of parsed pages and their embeddings, shared by runs (default: $RAGBENCH_PAGE_CACHE or "
        "~/.cache/ragbench/pages.sqlite)",
        identity="never",
        offers=SCORED,
    )

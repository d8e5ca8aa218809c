"""Retrieval: retrievers behind one batched interface, corpus readers and on-disk indexes.

Retrievers are plugins (the `retrievers` catalogue section); this module stays light (no bm25s,
no torch) so that `ragbench list` never imports them.
"""
from __future__ import annotations

from typing import Any

from ..builtin import section
from ..hookspecs import hookimpl
from .base import IndexBuilder, Retriever

DEFAULT_RETRIEVER = "provided"


@hookimpl
def ragbench_catalog() -> dict[str, Any]:
    return section("retrievers")


def load_retriever(name: str | None, args: dict[str, Any] | None = None) -> Retriever:
    """Build a retriever by catalogue name (`provided` when none is given) with its options."""
    from ..options import construct
    from ..registry import get_registry

    name = name or DEFAULT_RETRIEVER
    return construct(get_registry().load("retrievers", name), dict(args or {}), f"retriever {name}")


__all__ = ["IndexBuilder", "Retriever", "load_retriever"]

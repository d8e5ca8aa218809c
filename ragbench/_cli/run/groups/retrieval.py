"""What a run's system searches with: the retriever, the reranker and the refiner, each with its options, and the
cache of parsed pages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ...._values.options import parse_assignments
from ...._values.run_groups import RunRetrieval
from .option import Option, OptionGroup


def _component(name: str, what: str, example: str) -> tuple[Option, Option]:
    """--NAME and --NAME-arg of a retrieval component."""
    return (
        Option((f"--{name}",), (name,), {"default": None, "help": what}),
        Option(
            (f"--{name}-arg",),
            (f"{name}_args",),
            {"multiple": True, "metavar": "K=V", "help": f"{name} option, e.g. {example}"},
        ),
    )


class RetrievalOptions(OptionGroup):
    TITLE: ClassVar[str] = "Retrieval"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        *_component(
            "retriever", "retriever for ctx.retriever (ragbench list retrievers; default: provided)", "index=DIR"
        ),
        *_component("reranker", "reranks every search's results (ragbench list rerankers)", "model=DIR"),
        *_component("refiner", "refines the documents a reader shows (ragbench list refiners)", "model=DIR"),
        Option(
            ("--page-cache",),
            ("page_cache",),
            {
                "default": None,
                "metavar": "PATH|off",
                "help": "cache of parsed pages and their embeddings, shared by runs (default: $RAGBENCH_PAGE_CACHE "
                "or ~/.cache/ragbench/pages.sqlite)",
            },
        ),
    )

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> RunRetrieval:
        return RunRetrieval(
            retriever=values.get("retriever"),
            retriever_args=parse_assignments(values.get("retriever_arg", ()), "--retriever-arg"),
            reranker=values.get("reranker"),
            reranker_args=parse_assignments(values.get("reranker_arg", ()), "--reranker-arg"),
            refiner=values.get("refiner"),
            refiner_args=parse_assignments(values.get("refiner_arg", ()), "--refiner-arg"),
            page_cache=values.get("page_cache"),
        )

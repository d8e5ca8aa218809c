"""Rerankers and refiners: the components a run puts between the retriever and the reader
(ragbench._components.base says what each does). They are plugins, in the `rerankers` and `refiners`
sections of the catalogue (the built-in ones are served with the retrievers); this module stays light
(no torch, no sentence-transformers) so that `ragbench list` never imports them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Refiner, Reranker

if TYPE_CHECKING:
    from .._config.retrieval import RunRetrieval
    from .._registry import Registry


def load_component(kind: str, name: str | None, args: dict[str, Any] | None, *, registry: Registry) -> Any:
    """The reranker or refiner (`kind` "rerankers" or "refiners") named `name` with its options, not yet
    loaded (`load()` reads its model); None when no name is given. A bad option or a local model path
    that is not there is a one-line ConfigError naming the flag."""
    from .._values.options import construct

    if not name:
        return None
    label = f"{kind[:-1]} {name}"
    return construct(registry.load(kind, name), dict(args or {}), label)


def check_components(retrieval: RunRetrieval, registry: Registry, check: Any) -> None:
    """The pre-flight of `--reranker` and `--refiner`: a known name, options it takes, a local model path
    that is there (nothing loads)."""
    for kind, name, args in (
        ("rerankers", retrieval.reranker, retrieval.reranker_args),
        ("refiners", retrieval.refiner, retrieval.refiner_args),
    ):
        if name:
            with check.step(f"--{kind[:-1]} {name}"):
                load_component(kind, name, args, registry=registry)
        elif args:  # options of no component would be dropped without a word
            check.problem(
                f"--{kind[:-1]}-arg {', '.join(args)}: there is no --{kind[:-1]}; name one "
                f"(ragbench list {kind}) or leave the options out"
            )


__all__ = ["Refiner", "Reranker", "check_components", "load_component"]

"""The lazy surface of `ragbench.api` and its namespaces: each name is imported from the internal module
that defines it on first use (PEP 562 `__getattr__`), so a hook module importing `hookimpl` loads nothing else."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    namespace: str, modules: Mapping[str, tuple[str, ...]]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """`__all__`, `__getattr__` and `__dir__` of `namespace`, whose names are `modules` (internal module ->
    the names it defines). A name is looked up once, then kept in the namespace's own globals."""
    sources = {name: module for module, names in modules.items() for name in names}
    names = sorted(sources)

    def lookup(name: str) -> Any:
        module = sources.get(name)
        if module is None:
            raise AttributeError(
                f"{namespace} has no {name!r}: its names are listed in {namespace}.__all__ (docs/writing-plugins.md)"
            )
        value = getattr(importlib.import_module(module), name)
        vars(sys.modules[namespace])[name] = value  # imported once
        return value

    def listed() -> list[str]:
        return list(names)

    return names, lookup, listed

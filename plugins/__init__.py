"""Built-in system plugins (installed as `ragbench.plugins`), one module per RAG method."""
from typing import Any

from ragbench.builtin import section
from ragbench.hookspecs import hookimpl


@hookimpl
def ragbench_catalog() -> dict[str, Any]:
    return section("systems")

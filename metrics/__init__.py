"""Built-in metric plugins (installed as `ragbench.metrics`)."""
from typing import Any

from ragbench.builtin import section
from ragbench.hookspecs import hookimpl


@hookimpl
def ragbench_catalog() -> dict[str, Any]:
    return section("metrics")

"""Built-in system plugins (installed as `ragbench.plugins`): one folder per RAG method, its System class in
<method>/system.py (the catalogue's target), its prompts and helpers beside it."""

from typing import Any

from ragbench.api import hookimpl
from ragbench.api.data import section


@hookimpl
def ragbench_catalog() -> dict[str, Any]:
    return section("systems")

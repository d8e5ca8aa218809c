"""Built-in system plugins (installed as `ragbench.plugins`): one folder per RAG method, its System class in
<method>/system.py (the catalogue's target), its prompts and helpers beside it."""

from ragbench.api import hookimpl
from ragbench.api.data import JsonObject, section


@hookimpl
def ragbench_catalog() -> JsonObject:
    return {**section("systems")}

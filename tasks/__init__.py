"""Built-in task plugins (installed as `ragbench.tasks`), one folder per benchmark family."""
from typing import Any

from ragbench.builtin import section
from ragbench.hookspecs import hookimpl


@hookimpl
def ragbench_catalog() -> dict[str, Any]:
    return section("tasks", "groups")

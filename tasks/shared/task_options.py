"""What the benchmarks' tasks share about their options (--task-arg): the options given, each listed once (in
the signature the registry reads), and a value checked against its choices."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ragbench.api import ConfigError


def given_options(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A task's options as its `__init__` was given them, in its signature's order: that method's `locals()`,
    read before it makes a local of its own, less `self`, `data_path` (the base's own) and the `__class__`
    cell of a method that calls super()."""
    return {name: value for name, value in arguments.items() if name not in ("self", "data_path", "__class__")}


def check_choices(task: str, choices: Mapping[str, Collection[str]], **given: object) -> None:
    """Each option of `choices` among those `given`, in the order of `choices`: a ConfigError for the first value
    that is not one of its choices, "task TASK: OPTION 'VALUE' is not one of A, B"."""
    for option, allowed in choices.items():
        if option in given and given[option] not in allowed:
            raise ConfigError(f"task {task}: {option} '{given[option]}' is not one of {', '.join(allowed)}")

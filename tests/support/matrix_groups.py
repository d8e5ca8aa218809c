"""The built-in tasks grouped by what a system's behaviour on them depends on, read from the registry, so that
the system x task matrix (tests/run/test_matrix.py) runs every system once per group, not once per task.

Two tasks are in one group when they agree on everything a system sees of a task and everything that scores
what it did:
  reader      the Python class that reads the records, or for a YAML task its prompt style and `data.format`
  prompting   the prompting class systems call, its answer format and whether answers cite
  documents   whether the examples carry documents of their own (else a system that searches needs a corpus)
  metrics     the metrics, in order, with their options (a Chinese set's, a regex gold's)
A task declaring something new (a new style, format, metric or option) is a group of its own. Each group's
representative is its first task by name; python tests/support/matrix_groups.py prints the groups."""

from __future__ import annotations

import json
from typing import Any

from ragbench.testing import Registry, installed_registry

BUILTIN = "ragbench"


def behaviour_key(registry: Registry, task: str) -> tuple[Any, ...]:
    """(reader, prompting, documents, metrics) of `task`, from its class and an instance made without data."""
    task_class = registry.load("tasks", task)
    instance = task_class()
    spec = getattr(task_class, "spec", None)  # a YAML task's checked file
    reader = (spec.prompt.style, spec.data.format if spec.data else None) if spec else task_class.__qualname__
    prompting = instance.prompting
    options = dict(instance.scoring.metric_options or {})
    metrics = tuple(
        (name, json.dumps(options.get(name), sort_keys=True, default=str)) for name in instance.scoring.metrics
    )
    return (
        reader,
        (type(prompting).__qualname__, prompting.answer_format, prompting.cites),
        instance.own_documents,
        metrics,
    )


def task_groups(registry: Registry, tasks: list[str]) -> dict[str, list[str]]:
    """Representative -> the group's other tasks (sorted); `tasks` are grouped by `behaviour_key`."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for task in sorted(tasks):
        groups.setdefault(behaviour_key(registry, task), []).append(task)
    return {members[0]: members[1:] for members in groups.values()}


def builtin(registry: Registry, kind: str) -> list[str]:
    """The names of `kind` ("systems", "tasks") that ragbench itself provides."""
    return [name for name in registry.names(kind) if registry.entries[kind][name].provider == BUILTIN]


if __name__ == "__main__":
    REGISTRY = installed_registry()
    for representative, others in task_groups(REGISTRY, builtin(REGISTRY, "tasks")).items():
        print(f"{representative}: {', '.join(others) or '-'}")

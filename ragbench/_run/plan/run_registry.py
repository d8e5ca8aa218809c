"""The registry a run is given: the task files the run names registered in it before the run, so that planning
only looks tasks up and a run never changes its registry."""

from __future__ import annotations

from ..._registry import Registry, installed_registry
from ..._values.run_groups import RunWhat


def run_registry(what: RunWhat, registry: Registry | None = None) -> Registry:
    """`registry` (None: a new one of the installed plugins) with the task files a run of `what` names registered
    (`--tasks FILE.yaml`, a --data key that is one): the registry a run is given (`Evaluator`, the estimate's
    pilot, a rescoring). A file that does not register is said by the run's pre-flight, in its place. --data's keys
    are registered first: where one names another file declaring a --tasks file's task, the --tasks file's is run."""
    registry = registry if registry is not None else installed_registry()
    registry.add_task_files([*what.data, *what.tasks])
    return registry

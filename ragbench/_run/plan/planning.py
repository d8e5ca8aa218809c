"""Turning what a run asks (its RunConfig's groups of what to run and how to judge) into instantiated tasks, systems and metrics,
checking every option and running each plugin's pre-flight before anything is loaded or run (every problem
listed at once, one clear line each: ragbench._run.plan.preflight)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._catalog import TASK_FILE, Entry
from ..._checks import Preflight
from ..._config.judging import RunJudging
from ..._config.what import RunWhat
from ..._errors import ConfigError, did_you_mean
from ..._read_only import read_only
from ..._registry import Registry, installed_registry
from ..._storage.datafiles import check_data_path
from ..._system import System
from ..._task import Task
from ..._task.protocols import UsesTools, system_defaults
from ..._values.options import CLOSE, accepted_options, construct, task_args_for
from ..._yaml_tasks.discovery import is_task_file
from .metric_plan import check_metric_needs, check_metric_scopes, plan_metrics
from .planned_task import PlannedTask
from .system_options import system_options

if TYPE_CHECKING:
    pass


def run_registry(what: RunWhat, registry: Registry | None = None) -> Registry:
    """The registry a run is given, so that planning only looks tasks up and a run never changes its registry:
    `registry` (None: a new one of the installed plugins) with the task files a run of `what` names registered
    (`--tasks FILE.yaml`, a --data key that is one): the registry a run is given (`Evaluator`, the estimate's
    pilot, a rescoring). A file that does not register is said by the run's pre-flight, in its place. --data's keys
    are registered first: where one names another file declaring a --tasks file's task, the --tasks file's is run."""
    registry = registry if registry is not None else installed_registry()
    registry.add_task_files([*what.data, *what.tasks])
    return registry


def data_by_task(
    data: Mapping[str, str], registry: Registry, check: Preflight, names: Sequence[str] | None = None
) -> dict[str, str]:
    """`--data KEY=PATH` by the task each KEY names (a task, an alias or a task file the registry holds), the first
    KEY of a task winning; a KEY that names no task, or none of `names` (the run's tasks), or a task file declaring the
    task another file given declares (which would run that file's task on this KEY's data), is a problem, and every
    other KEY is still read."""
    paths: dict[str, str] = {}
    for key, path in data.items():
        try:
            entry = registry.entry("tasks", key)
        except ConfigError as exc:
            check.problem(str(exc))
            continue
        name = entry.name
        if is_task_file(key) and entry.plugin == TASK_FILE and Path(entry.provider).resolve() != Path(key).resolve():
            check.problem(
                f"--data {key}=...: declares task '{name}', as {entry.provider} does; give one of them another "
                "`task:` name"
            )
            continue
        if names is not None and name not in names:
            check.problem(f"--data {key}=...: task '{key}' is not among --tasks")
        paths.setdefault(name, path)
    return paths


RESERVED_ROLES = ("model", "nli")  # and judge:N: the names calls/llm.jsonl gives the run's other engines


def _check_roles(role_models: Iterable[str], system: str, system_class: type[System]) -> None:
    """--role-model names roles the system declares (`SystemDeclaration.roles`), each once."""
    roles = system_class.declares.roles
    for role in role_models:
        if role not in roles:
            offered = f"its roles are {', '.join(roles)}" if roles else "it has a single model (use --model)"
            raise ConfigError(f"--role-model {role}=...: system {system} has no role '{role}'; {offered}")
        if role in RESERVED_ROLES or role.startswith("judge"):
            raise ConfigError(f"--role-model {role}: the name is reserved for the run's own engines")


def plan(
    what: RunWhat,
    judging: RunJudging,
    registry: Registry,
    check: Preflight | None = None,
    roles: Sequence[str] = (),
) -> list[PlannedTask]:
    """Instantiate every task, one system per task (task defaults differ) and the tasks' metrics,
    running their pre-flight hooks; `roles`: the system's roles given a model of their own (--role-model). The
    tasks are looked up in `registry`, which holds the run's task files (`run_registry(what, registry)`, by whoever
    made it). Problems go to `check`; without one, they are raised at the end, all at once
    (`PreflightError`)."""
    own = check is None
    check = check if check is not None else Preflight()
    planned = _plan(what, judging, roles, registry, check)
    if own:
        check.raise_if_failed()
    return planned


def _plan(
    what: RunWhat, judging: RunJudging, roles: Sequence[str], registry: Registry, check: Preflight
) -> list[PlannedTask]:
    names: list[str] = []
    with check.step(f"tasks {', '.join(what.tasks)} installed"):
        names = registry.expand_tasks(what.tasks)
    if not names:
        if not what.tasks:
            check.problem("--tasks: no task named; give task or group names (ragbench list tasks), e.g. --tasks demo")
        return []
    entries = {name: registry.entry("tasks", name) for name in names}
    data: dict[str, str] = {}
    with check.step("--task-arg, --data and --metrics name tasks of the run"):
        data = data_by_task(what.data, registry, check, names)  # first: a task that fails to load stops the step
        _check_task_args(what.task_args, {name: entry.load() for name, entry in entries.items()}, check)
        check_metric_scopes(judging.metrics, names, registry)
    system_class = None
    with check.step(f"system {what.system} installed"):
        system_class = registry.load("systems", what.system)
        _check_roles(tuple(roles), what.system, system_class)
    chosen: set[str] = set()  # every metric named for a task, planned or refused
    planned = [
        item
        for name in names
        if (
            item := _plan_task(
                what, judging, registry, entries[name], data.get(name), names, system_class, check, chosen
            )
        )
    ]
    check_metric_needs(judging, planned, chosen, check)
    return planned


def _plan_task(
    what: RunWhat,
    judging: RunJudging,
    registry: Registry,
    entry: Entry,
    data_path: str | None,
    names: list[str],
    system_class: type[System] | None,
    check: Preflight,
    chosen: set[str],
) -> PlannedTask | None:
    """One task of the run (its registry `entry`; `data_path`: its --data) with its system and metrics, each checked
    by its own pre-flight."""
    name = entry.name
    system = None
    task = _build_task(what, entry, data_path, check)
    if task is None:
        return None
    task.preflight(check)
    if system_class is None:
        return None
    with check.step(f"system {what.system} options"):
        options = system_options(
            system_class,
            entry.defaults.get("system_args", {}),
            system_defaults(task),
            what.top_k,
            what.system_args,
        )
        system = construct(system_class, options, f"system {what.system}", injected={"registry": registry})
    if system is None:
        return None
    system.preflight(check, task)
    return PlannedTask(name, task, system, plan_metrics(judging, registry, name, names, task, check, chosen))


def _build_task(what: RunWhat, entry: Entry, data_path: str | None, check: Preflight) -> Task | None:
    """The task of registry `entry` built from its options and its --data (`data_path`), nothing loaded yet; None
    when they are wrong (reported to `check`)."""
    name = entry.name
    task: Task | None = None
    with check.step(f"task {name} options"):
        task_class = entry.load()
        if data_path is not None:
            check_data_path(Path(data_path), f"--data {name}={data_path}")
        task_args = {**entry.defaults.get("task_args", {}), **task_args_for(name, task_class, what.task_args)}
        task = construct(task_class, {"data_path": data_path, **task_args}, f"task {name}")
        if isinstance(getattr(task, "args", None), dict):  # the run's config (results.json): no plugin changes it
            task.args = read_only(task.args)
        if isinstance(task, UsesTools):
            # set by the run, as UsesTools says (not declared there: isinstance would then require it)
            task.tools_replayed = what.replay_tools is not None  # type: ignore[attr-defined]
    return task


def plan_scoring(
    what: RunWhat,
    judging: RunJudging,
    registry: Registry,
    check: Preflight,
    inherited_args: frozenset[str] = frozenset(),
) -> tuple[list[PlannedTask], dict[str, Any]]:
    """The tasks of a finished run and the metrics that score its saved predictions again (ragbench
    rescore): each task built from its options but neither loaded nor checked (its data is not read), no
    system; the metrics checked as for a run, their judge and NLI models included. With them, the rescoring's
    metric options: `inherited_args` are the keys of `judging.metric_args` taken from the run rather than
    given, and those of a metric the rescoring no longer asks are left out (a user who asks for other metrics
    did not give them)."""
    run_registry(what, registry)  # a finished run's tasks: its config is read here, from its run.json
    names = registry.expand_tasks(what.tasks)
    data = data_by_task(what.data, registry, check)
    with check.step("--metrics name tasks of the run"):
        check_metric_scopes(judging.metrics, names, registry)
    chosen: set[str] = set()
    planned = [
        PlannedTask(name, task, None, plan_metrics(judging, registry, name, names, task, check, chosen))
        for name in names
        if (task := _build_task(what, registry.entry("tasks", name), data.get(name), check)) is not None
    ]
    metric_args = {
        key: value
        for key, value in judging.metric_args.items()
        if key not in inherited_args or any(key.startswith(metric + ".") for metric in chosen)
    }
    check_metric_needs(replace(judging, metric_args=metric_args), planned, chosen, check)
    return planned, metric_args


def _check_task_args(task_args: Mapping[str, Any], task_classes: dict[str, type], check: Preflight) -> None:
    for key in task_args:
        name, option = key.split(".", 1) if "." in key else (None, key)
        if name is not None and name not in task_classes:
            check.problem(f"--task-arg {key}: task '{name}' is not among --tasks{did_you_mean(name, task_classes)}")
            continue
        targets = [cls for task, cls in task_classes.items() if name in (None, task)]
        accepted = [accepted_options(cls) for cls in targets]
        if not any(names is None or option in names for names in accepted):
            known = sorted({known for names in accepted for known in names or ()} - {"data_path"})
            check.problem(
                f"--task-arg {key}=...: no selected task accepts '{option}'{did_you_mean(option, known, most=3, cutoff=CLOSE)}"
            )

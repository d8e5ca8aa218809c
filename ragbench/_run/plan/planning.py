"""Turning what a run asks (its RunConfig's groups of what to run and how to judge) into instantiated tasks, systems and metrics,
checking every option and running each plugin's pre-flight before anything is loaded or run (every problem
listed at once, one clear line each: ragbench._run.plan.preflight)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._catalog import TASK_FILE, Entry
from ..._checks import Preflight
from ..._config.judging import RunJudging
from ..._config.what import RunWhat
from ..._errors import ConfigError, did_you_mean
from ..._metric import Metric, fits, reported_keys
from ..._nli import nli_format
from ..._read_only import read_only
from ..._registry import Registry, installed_registry
from ..._storage.datafiles import check_data_path
from ..._system import System
from ..._task import Task
from ..._task.protocols import UsesRunResources, UsesTools, system_defaults, task_corpus
from ..._values.options import CLOSE, accepted_options, construct, scoped_args, task_args_for
from ..._yaml_tasks.discovery import is_task_file
from ..judges.raters import compares
from .system_options import system_options

if TYPE_CHECKING:
    from ..lifetime.resources import RunResources


def run_registry(what: RunWhat, registry: Registry | None = None) -> Registry:
    """The registry a run is given, so that planning only looks tasks up and a run never changes its registry:
    `registry` (None: a new one of the installed plugins) with the task files a run of `what` names registered
    (`--tasks FILE.yaml`, a --data key that is one): the registry a run is given (`Evaluator`, the estimate's
    pilot, a rescoring). A file that does not register is said by the run's pre-flight, in its place. --data's keys
    are registered first: where one names another file declaring a --tasks file's task, the --tasks file's is run."""
    registry = registry if registry is not None else installed_registry()
    registry.add_task_files([*what.data, *what.tasks])
    return registry


@dataclass
class PlannedTask:
    name: str
    task: Task
    system: System | None  # None when the run only scores saved predictions (ragbench rescore)
    metrics: list[Metric]
    resources: RunResources | None = None  # the run's, from `bind` (what systems and metrics reach as ctx.resources)
    corpus: Path | None = field(init=False)  # the corpus the task ships (`OwnCorpus`); None: it ships none

    def __post_init__(self) -> None:
        self.corpus = task_corpus(self.task)

    def bind(self, resources: RunResources) -> None:
        """The run's resources, before anything else starts: lent to the task when it works in them."""
        self.resources = resources
        if isinstance(self.task, UsesRunResources):
            self.task.bind(resources)


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
        _check_metric_scopes(judging.metrics, names, registry)
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
    _check_metric_needs(judging, planned, chosen, check)
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
        _check_metric_scopes(judging.metrics, names, registry)
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
    _check_metric_needs(replace(judging, metric_args=metric_args), planned, chosen, check)
    return planned, metric_args


def plan_metrics(
    judging: RunJudging,
    registry: Registry,
    name: str,
    names: list[str],
    task: Task,
    check: Preflight,
    chosen: set[str],
) -> list[Metric]:
    """The metrics of one task, each checked (fits the task's gold, its options, its own pre-flight), with
    their keys renamed by `--metric-arg M.key_prefix=P`; keys two metrics would both report are refused."""
    metrics = []
    for m in dict.fromkeys(
        known
        for m in metric_names(task.scoring.metrics, judging.metrics, name, names)
        if (known := _known_metric(registry, m, check)) is not None
    ):
        chosen.add(m)
        with check.step(f"metric {m} on task {name}"):
            cls = registry.metric_class(m)
            if not fits(cls, task):
                needed = ", ".join(
                    sorted(
                        set(cls.declares.gold_needs)
                        - set(task.scoring.gold_fields or ())
                        - ({"citations"} if task.prompting.cites else set())
                    )
                )
                raise ConfigError(
                    f"metric {m} cannot score task {name}: it needs {needed} gold, which {name}'s records "
                    f"do not carry (they carry: {', '.join(task.scoring.gold_fields or ()) or 'none'}); "
                    f"leave {m} out of --metrics or give it only to the tasks it fits (--metrics TASK:+{m}); "
                    "`ragbench list metrics` shows which tasks each metric fits"
                )
            own = next(
                (args for name, args in task.scoring.metric_options.items() if registry.metric_name(name) == m), {}
            )
            args = {**own, **scoped_args(m, judging.metric_args)}
            prefix = args.pop(KEY_PREFIX, "")
            metric = construct(cls, args, f"metric {m}")
            metric.key_prefix = str(prefix)
            metrics.append(metric)
            metric.preflight(check, task)
    _check_key_collisions(name, metrics, check)
    return metrics


KEY_PREFIX = "key_prefix"  # --metric-arg METRIC.key_prefix=P, taken by the run for every metric (Metric.key_prefix)


def _check_key_collisions(task: str, metrics: list[Metric], check: Preflight) -> None:
    """Two metrics reporting a key of the same name would overwrite each other's values: refused."""
    owners: dict[str, Metric] = {}
    for metric in metrics:
        for key in [*reported_keys(metric), *reported_keys(metric, corpus=True)]:
            first = owners.setdefault(key, metric)
            if first is not metric:
                check.problem(
                    f"task {task}: metrics {first.name} and {metric.name} both report the key '{key}'; "
                    f"rename one's keys, e.g. --metric-arg {metric.name}.{KEY_PREFIX}="
                    f"{_prefix_hint(metric)}_ (or leave one out of --metrics)"
                )


def _prefix_hint(metric: Metric) -> str:
    return "".join(c if c.isalnum() else "_" for c in metric.name.split(":")[0])


def _known_metric(registry: Registry, name: str, check: Preflight) -> str | None:
    """The metric's own name (an alias resolved); None, said to `check`, for a name no metric has."""
    try:
        return registry.metric_name(name)
    except ConfigError as exc:
        check.problem(f"--metrics: {exc}")
        return None


def metric_names(
    task_metrics: tuple[str, ...], chosen: Sequence[str], task: str = "", tasks: Sequence[str] = ()
) -> list[str]:
    """The metrics of `task` for this run: `--metrics a,b` replaces the task's list, `+c` adds to it;
    `TASK:a` / `TASK:+c` (TASK one of the run's `tasks`) applies to that task only."""
    mine = []
    for item in chosen:
        scope, scoped, rest = item.partition(":")
        if not scoped or scope not in tasks:  # hf:bleu is a metric name, not a scope
            mine.append(item)
        elif scope == task:
            mine.append(rest)
    replace = [name for name in mine if not name.startswith("+")]
    added = [name[1:] for name in mine if name.startswith("+")]
    return list(dict.fromkeys([*(replace if replace else task_metrics), *added]))


def _check_metric_scopes(chosen: Sequence[str], names: list[str], registry: Registry) -> None:
    """`TASK:NAME` must name a task of the run, by its name (not an alias)."""
    for item in chosen:
        scope, scoped, _ = item.partition(":")
        if scoped and scope in registry.aliases["tasks"]:
            raise ConfigError(
                f"--metrics {item}: write the task's name, {registry.aliases['tasks'][scope]}:..., to scope a metric"
            )
        if scoped and scope in registry.entries["tasks"] and scope not in names:
            raise ConfigError(f"--metrics {item}: task '{scope}' is not among --tasks ({', '.join(names)})")


def _check_metric_needs(judging: RunJudging, planned: list[PlannedTask], chosen: set[str], check: Preflight) -> None:
    """Metrics that call an NLI model or a judge fail before the run when none is configured."""
    for key in judging.metric_args:
        if not any(key.startswith(m + ".") for m in chosen):
            check.problem(
                f"--metric-arg {key}=...: expected METRIC.KEY for a metric of the selected tasks "
                f"({', '.join(sorted(chosen)) or 'none'})"
            )
    provided = {"nli": judging.nli is not None, "judge": bool(judging.judges)}
    hints = {
        "nli": "pass --nli ENGINE:MODEL (e.g. hf:google/t5_xxl_true_nli_mixture, or replay:nli_calls.jsonl)",
        "judge": "pass --judge ENGINE:MODEL",
    }
    for need, hint in hints.items():
        users = sorted({f"{m.name} ({p.name})" for p in planned for m in p.metrics if need in m.declares.needs})
        if users and not provided[need]:
            check.problem(
                f"metric(s) {', '.join(users)} need {'an NLI' if need == 'nli' else 'a judge'} model; "
                f"{hint} (or choose other metrics with --metrics)"
            )
    for line in unused_metric_models(judging.judges, judging.nli, judging.judge_repeats, planned):
        check.warn(line)
    for p in planned:
        for metric in p.metrics:
            roles = metric.declares.judge_roles if "judge" in metric.declares.needs else ()
            if roles and len(judging.judges) > len(roles):
                check.problem(
                    f"metric {metric.name} ({p.name}) asks at most {len(roles)} judge(s), one per role "
                    f"({', '.join(roles)}), and {len(judging.judges)} --judge are given; give at most "
                    f"{len(roles)} (or choose other metrics with --metrics)"
                )
    with check.step(f"--nli-format {judging.nli_format}"):
        nli_format(judging.nli_format)


def needs(planned: list[PlannedTask], need: str) -> bool:
    return any(need in metric.declares.needs for p in planned for metric in p.metrics)


def unused_metric_models(
    judges: Sequence[str], nli: str | None, judge_repeats: int | None, planned: list[PlannedTask]
) -> list[str]:
    """One line for a --judge or --nli that no metric of the run asks: it is not loaded, and that is said
    rather than a judged number silently missing; and for a --judge-repeats that gives no metric raters."""
    lines = []
    if judges and not needs(planned, "judge"):
        lines.append(
            f"{' '.join(f'--judge {judge}' for judge in judges)} is not used: no metric of this "
            "run asks a judge (add one, e.g. --metrics +llm_judge)"
        )
    if judge_repeats is not None and not any(
        compares(m, len(judges), judge_repeats) for p in planned for m in p.metrics
    ):
        lines.append(
            f"--judge-repeats {judge_repeats} compares nothing: "
            + (
                f"each judged metric is judged once by {'its judge' if len(judges) == 1 else 'its judges'}"
                " (give 2 or more)"
                if needs(planned, "judge")
                else "no metric of this run asks a judge"
            )
        )
    if nli is not None and not needs(planned, "nli"):
        lines.append(
            f"--nli {nli} is not used: no metric of this run asks an NLI model (e.g. citation, "
            "on a task whose answers cite)"
        )
    return lines


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

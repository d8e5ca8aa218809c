"""The metrics a run plans for each task (`plan_metrics`): `--metrics` read per task (`metric_names`), each metric
checked against the task's gold and its options, keys two metrics would both report refused; and, across the run,
the judge and NLI models the metrics need or are given unused (`check_metric_needs`, `unused_metric_models`)."""

from __future__ import annotations

from collections.abc import Sequence

from ..._checks import Preflight
from ..._config.judging import RunJudging
from ..._errors import ConfigError
from ..._metric import Metric, fits, reported_keys
from ..._nli import nli_format
from ..._registry import Registry
from ..._task import Task
from ..._values.options import construct, scoped_args
from ..judges.raters import compares
from .planned_task import PlannedTask


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


def check_metric_scopes(chosen: Sequence[str], names: list[str], registry: Registry) -> None:
    """`TASK:NAME` must name a task of the run, by its name (not an alias)."""
    for item in chosen:
        scope, scoped, _ = item.partition(":")
        if scoped and scope in registry.aliases["tasks"]:
            raise ConfigError(
                f"--metrics {item}: write the task's name, {registry.aliases['tasks'][scope]}:..., to scope a metric"
            )
        if scoped and scope in registry.entries["tasks"] and scope not in names:
            raise ConfigError(f"--metrics {item}: task '{scope}' is not among --tasks ({', '.join(names)})")


def check_metric_needs(judging: RunJudging, planned: list[PlannedTask], chosen: set[str], check: Preflight) -> None:
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

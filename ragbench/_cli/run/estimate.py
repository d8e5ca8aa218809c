"""`ragbench estimate`: with the run's own options, what the run will cost before it is paid - examples, LLM calls,
tokens, searches, dollars by model and judge, wall time, each with its interval - from a pilot of a few of its
examples run in the run's own folder (ragbench._run.estimate.pilot_run), which the run then reuses (`--resume`)."""

from __future__ import annotations

import json
import math
import shlex
import sqlite3
import sys
from typing import Any

import click
import cloup

from ..._errors import EXIT_CONFIG, ConfigError
from ..outcomes import config_error, environment_error, stopped_at_cap, stopped_at_failure
from ..registry import command_registry
from .help_groups import with_help_groups
from .option_values import run_config_of, split_names
from .options import with_run_options

DEFAULT_PILOT = "5%"
DEFAULT_PRECISION = "10%"  # the dollars' point wanted within it: the pilot grown to what their spread asks for
COUNTS = {  # figure: how it is shown
    "llm_calls": "LLM calls (system)",
    "prompt_tokens": "prompt tokens (system)",
    "completion_tokens": "output tokens (system)",
    "searches": "searches",
}


def shown(value: float, money: bool) -> str:
    return f"${value:,.4f}" if money else f"{value:,.0f}"


def interval_text(interval: Any, money: bool = False) -> str:
    """The point and its interval; a figure every example that ran had the same value of (`each`: fixed by design,
    as vanilla's one LLM call) without one: that value an example, fewer only where the response cache answers."""
    if getattr(interval, "each", None) is not None:
        return f"{shown(interval.point, money)}  ({shown(interval.each, money)} an example in every example that ran)"
    high = "unbounded" if interval.high is None else shown(interval.high, money)
    return f"{shown(interval.point, money)}  [95%: {shown(interval.low, money)} .. {high}]"


def figure_name(key: str) -> str | None:
    """How a figure of the estimate is named, None for one not shown (cached calls: nothing to pay)."""
    if key in COUNTS:
        return COUNTS[key]
    if key.startswith("usd:"):
        return f"dollars, {key.removeprefix('usd:').replace('model', 'system model', 1)}"
    if key.startswith("judge:") and not key.endswith("cached_calls"):
        metric, _, what = key.partition(" ")
        return f"{what.replace('_', ' ')} ({metric})"
    return None


def reach(task: Any) -> float:
    """How far from its point a task's dollars' interval reaches, as a share of the point (the widest of its dollar
    figures; inf: unbounded)."""
    shares = [
        max(each.point - each.low, math.inf if each.high is None else each.high - each.point) / each.point
        for key, each in task.totals.items()
        if key.startswith("usd:") and each.point > 0
    ]
    return max(shares, default=0.0)


def precision_line(task: Any) -> str | None:
    """Where a task's dollars may be off by more than 10% (their interval reaches beyond it, or their spread asks
    for a larger pilot): that the point is not to be taken as within 10%, and what runs the pilot that puts it so."""
    far = reach(task)
    wide = "unbounded" if far == math.inf else f"{far:.0%}"
    if task.pilot_for is not None and task.pilot_for > task.done:
        return (
            f"{task.name}: the dollars within 10% of their point (95%) need about {task.pilot_for} of its examples run, "
            f"{task.done} have: until they ran the point is within 10% of what the run costs only by chance (the "
            f"interval reaches {wide} from it); --precision 10% runs them (so does --pilot {task.pilot_for}; a "
            "pilot holds the smaller ones)"
        )
    if far > 0.10:
        return (
            f"{task.name}: the dollars' interval reaches {wide} from their point: the point is within 10% of what the "
            "run costs only by chance; a larger pilot (--pilot) narrows it"
        )
    return None


def estimate_lines(estimate: Any) -> list[str]:
    lines = [
        f"examples: {estimate.records} in the run, {estimate.done} done "
        f"({estimate.pilot_ran} by this pilot), {estimate.records - estimate.done} left",
    ]
    paid_before, paid = estimate.paid(before=True), estimate.paid()
    for key, interval in estimate.totals.items():
        name = figure_name(key)
        if name is None:
            continue
        money = key.startswith("usd:")
        lines.append(
            f"{name}: {interval_text(interval, money)}; paid already {shown(paid.get(key, 0.0), money)} "
            f"(before this pilot {shown(paid_before.get(key, 0.0), money)})"
        )
    if estimate.wall is None:
        lines.append("wall time left: unknown (no attempt of this run was timed)")
    else:
        lines.append(f"wall time left, seconds: {interval_text(estimate.wall)}")
    lines.extend(line for line in map(precision_line, estimate.tasks) if line)
    lines.append(estimate.prompt_lengths)
    lines.extend(f"cannot know: {line}" for line in estimate.unknowns)
    return lines


@click.command("estimate", cls=cloup.Command)
@with_help_groups
@click.option(
    "--pilot",
    default=DEFAULT_PILOT,
    show_default=True,
    help="records of each task the pilot runs for real: a share (5%) or a count (20); 0 runs none. Given, the "
    "pilot is that size (no --precision unless given)",
)
@click.option(
    "--precision",
    default=None,
    metavar="PCT",
    help="after the pilot, run as many more of each task's records as its spread asks for the dollars' point to be "
    f"within PCT of the total (95%; Stein's two-stage sample); {DEFAULT_PRECISION} unless --pilot is given",
)
@click.option("--json", "as_json", is_flag=True, help="the estimate as JSON")
@with_run_options
def estimate_command(pilot: str, precision: str | None, as_json: bool, **options: Any) -> None:
    """What a run with these options will cost, before it is paid: a pilot of a random sample of its examples (5% by
    default) runs for real in the run's own folder, and the rest is estimated from it, each figure with a 95%
    interval; grown, unless --pilot is given, until the dollars' point is within 10% (--precision). Run the same
    options with --resume afterwards: the pilot's examples are not paid again."""
    if not split_names(options["tasks"] or ""):
        click.echo("ragbench estimate: error: --tasks is required (the same options as the run)", err=True)
        sys.exit(EXIT_CONFIG)
    sized = click.get_current_context().get_parameter_source("pilot") != click.core.ParameterSource.DEFAULT
    show_estimate(pilot, as_json, options, precision or (None if sized else DEFAULT_PRECISION))


def show_estimate(pilot: str, as_json: bool, options: dict[str, Any], precision: str | None = None) -> None:
    """The estimate of the run `options` name, after a pilot of `pilot` (`ragbench estimate`, and the run's
    `--estimate`, which stops here): printed, with the command that reuses the pilot; a ConfigError or a fault of
    the environment ends in one line."""
    from ..._run.estimate.pilot_run import PilotSize, estimate
    from ..._run.estimate.pilot_run import as_json as estimate_json
    from ..._run.example import StoppedAtFailure
    from ..._run.lifetime.interrupted import RunInterrupted, exit_interrupted
    from ..._run.plan.run_registry import run_registry

    try:
        size = PilotSize.parse(pilot) if pilot.strip() != "0" else None
        share = PilotSize.precision(precision) if precision is not None else None
        config = run_config_of(options)
        registry = run_registry(config.what, command_registry())
        result = estimate(config, registry, size or PilotSize(count=1), size is not None, share)
    except ConfigError as exc:
        config_error(exc)
    except (OSError, sqlite3.Error) as exc:
        environment_error(exc)
    except StoppedAtFailure as exc:  # --fail-fast: a pilot example failed
        stopped_at_failure(exc)
    except RunInterrupted as exc:  # Ctrl-C during the pilot: its examples saved are kept
        exit_interrupted(exc)
    except Exception as exc:  # the pilot reached --max-cost; anything else is raised again
        stopped_at_cap(exc)
        raise
    if as_json:
        click.echo(json.dumps(estimate_json(result), indent=2))
        return
    for line in estimate_lines(result):
        click.echo(line)
    args = [a for a in sys.argv[1:] if a not in ("estimate", "--estimate", "--resume", "--overwrite", "--json")]
    own = ("--pilot", "--precision")
    args = [a for i, a in enumerate(args) if not (a.partition("=")[0] in own or (i and args[i - 1] in own))]
    click.echo(
        f"ragbench estimate: the pilot's examples are saved in {result.run_dir}; the run reuses them: "
        f"{shlex.join(['ragbench', *args, '--resume'])}"
    )

"""`ragbench estimate`: with the run's own options, what the run will cost before it is paid - examples, LLM calls,
tokens, searches, dollars by model and judge, wall time, each with its interval - from a pilot of a few of its
examples run in the run's own folder (ragbench._run.estimate.pilot_run), which the run then reuses (`--resume`)."""

from __future__ import annotations

import json
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
    from ..._cost.pilot import PilotSize
    from ..._cost.run_estimate import as_json as estimate_json
    from ..._cost.run_estimate import estimate_lines
    from ..._run.estimate.pilot_run import estimate
    from ..._run.example import StoppedAtFailure
    from ..._run.lifetime.interrupted import RunInterrupted, exit_interrupted
    from ..._run.plan.planning import run_registry

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

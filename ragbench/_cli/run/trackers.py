"""Logging runs to experiment trackers on the command line: the options a run takes (`--wandb`, `--wandb-arg`,
`--mlflow URI`, `--mlflow-arg`), the step after a run that logs its finished folder, and `ragbench log RUN`
for a run folder already there (a failed logging tried again, a run made by `score`, `rescore` or `reproduce`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from ..._errors import EXIT_INCOMPLETE, EXIT_TRACKER, ConfigError
from ..._stop_signals import signal_of
from ..install_hints import for_this_install
from ..outcomes import config_error
from .options import Command

if TYPE_CHECKING:
    from ..._trackers.trackers import TrackerRequest

tracker_options = [
    click.option(
        "--wandb",
        is_flag=True,
        help="log the finished run to Weights & Biases: config, metrics, per-sample tables, the run folder as an "
        "artifact (pip install 'ragbench[wandb]'; W&B's settings apply, e.g. WANDB_MODE=offline)",
    ),
    click.option(
        "--wandb-arg",
        multiple=True,
        metavar="K=V",
        help="wandb.init option: project, entity, name, group, job_type, tags, notes, mode, dir",
    ),
    click.option(
        "--mlflow",
        default=None,
        metavar="URI",
        help="log the finished run to MLflow at this tracking URI: a folder (a local file store, e.g. mlruns) or "
        "a server's http://HOST:PORT (pip install 'ragbench[mlflow]')",
    ),
    click.option("--mlflow-arg", multiple=True, metavar="K=V", help="MLflow option: experiment, run_name"),
]
TRACKER_KEYS = ("wandb", "wandb_arg", "mlflow", "mlflow_arg")


def with_tracker_options(func: Command) -> Command:
    for option in reversed(tracker_options):
        func = option(func)
    return func


def requested_trackers(options: dict[str, Any]) -> list[TrackerRequest]:
    """The trackers the command's options ask for, their options taken out of `options` (ConfigError: a malformed
    option, or a tracker whose package is not installed, so a long run does not end unable to log)."""
    from ..._trackers.trackers import install_problems, tracker_requests

    requests = tracker_requests(*(options.pop(name) for name in TRACKER_KEYS))
    if problems := install_problems(requests):
        raise ConfigError("\n".join(problems))
    return requests


def log_finished_run(run_dir: Any, requests: list[TrackerRequest], command: str = "ragbench") -> list[str]:
    """Log the run folder to each tracker, a line for each on the console; the lines of those that failed, each
    naming the tracker, what failed, and the command that logs the run again."""
    from ..._trackers.trackers import log_command, log_run

    failed = []
    for request in requests:
        click.echo(f"{command}: logging the run to {request.destination} ...", err=True)
        try:
            where = log_run(run_dir, request)
        except KeyboardInterrupt as exc:
            click.echo(
                f"\n{command}: logging to {request.destination} interrupted; the run in {run_dir} is saved and unchanged: "
                f"log it with `{log_command(run_dir, requests[requests.index(request) :])}`",
                err=True,
            )
            sys.exit(128 + signal_of(exc))
        except Exception as exc:  # whatever the tracker's client raises: the run is done and saved all the same
            failed.append(
                f"{command}: error: logging to {request.destination} failed ({type(exc).__name__}: "
                f"{for_this_install(str(exc)).splitlines()[0] if str(exc) else 'no message'}); the run in {run_dir} "
                f"is saved and unchanged: log it with `{log_command(run_dir, [request])}`"
            )
            continue
        click.echo(f"logged to {request.label}: {where}")
    for line in failed:
        click.echo(line, err=True)
    return failed


def exit_after_logging(failed: list[str], complete: bool) -> None:
    """A run whose logging failed exits 75 when it is complete (1 when incomplete, as any incomplete run)."""
    if failed:
        sys.exit(EXIT_TRACKER if complete else EXIT_INCOMPLETE)


@click.command("log")
@click.argument("run_dir", metavar="RUN")
@with_tracker_options
def log_command(run_dir: str, **options: Any) -> None:
    """Log a finished run folder to experiment trackers (--wandb, --mlflow URI): its config, headline metrics,
    per-sample tables and files. The folder is only read. Exit 75 when a tracker's logging failed."""
    try:
        requests = requested_trackers(options)
        if not requests:
            raise ConfigError("log: give --wandb, --mlflow URI or both (the trackers to log the run to)")
        from ..._trackers.run_log import run_log

        run_log(run_dir)  # a folder that is no finished run is refused before any tracker starts a run
    except ConfigError as exc:
        config_error(exc)
    if log_finished_run(run_dir, requests, "ragbench log"):
        sys.exit(EXIT_TRACKER)

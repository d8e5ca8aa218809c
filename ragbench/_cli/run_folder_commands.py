"""Commands over run folders: `ragbench rescore`, `compare`, `view` and `reproduce`."""

from __future__ import annotations

import dataclasses
import functools
import signal
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import cloup

from .._config.option_bounds import too_many
from .._errors import EXIT_CONFIG, EXIT_INCOMPLETE, ConfigError
from .._stop_signals import exit_when_stuck, signal_of
from .._storage.files import naming, open_file, write_atomically, write_problem
from .._values.options import parse_assignments
from .outcomes import config_error, environment_error, evaluated, report_outcome
from .registry import command_registry
from .run.help_groups import with_help_groups
from .run.option_values import config_fields, judge_args_of, read_judging_files, split_names
from .run.options import with_offers

if TYPE_CHECKING:
    from .._reports.compare.comparison import Report, Run

EXIT_WORSE = 1  # ragbench compare --fail-if-worse


@click.command("rescore")
@click.argument("run_dir", metavar="RUN")
@with_offers("rescore")  # each worded for a rescoring: what is not given is the run's
def rescore_command(
    run_dir: str,
    include_path: tuple[str, ...],
    metrics: str | None,
    metric_arg: tuple[str, ...],
    judge: tuple[str, ...],
    judge_arg: tuple[str, ...],
    judge_repeats: int | None,
    nli: str | None,
    nli_arg: tuple[str, ...],
    nli_format: str | None,
    human_labels: str | None,
    price_table: str | None,
    bootstrap_iters: int | None,
    output: str | None,
    overwrite: bool,
    cache: str | None,
    no_progress: bool,
    max_inflight: int | None,
) -> None:
    """Score a finished run's saved predictions again (other metrics, judges or NLI model, or metrics that
    failed) without running the system, into a new run folder."""
    from .._run.rescore.rescore_run import rescore_run

    stopped = functools.partial(_rescore_stopped, run_dir)
    try:
        changes = {
            "metrics": split_names(metrics) if metrics else None,
            "metric_args": parse_assignments(metric_arg, "--metric-arg"),
            "judges": list(judge),
            "judge_args": judge_args_of(judge_arg, judge),
            "judge_repeats": judge_repeats,
            "nli": nli,
            "nli_args": parse_assignments(nli_arg, "--nli-arg"),
            "nli_format": nli_format,
            "output": output,
            "overwrite": overwrite,
            "max_inflight": max_inflight,
            "cache": cache,
            "bootstrap_iters": bootstrap_iters,
            "progress": not no_progress,
            "human_labels": human_labels,
            "price_table": price_table,
        }
        read_judging_files(human_labels, price_table)
        with exit_when_stuck(stopped):  # SIGTERM and SIGHUP stop it as Ctrl-C does
            outcome = rescore_run(run_dir, changes, command_registry(), include_path)
    except ConfigError as exc:
        config_error(exc)
    except (OSError, sqlite3.Error) as exc:  # the rescored folder holds an unfinished run: --overwrite replaces it
        environment_error(
            exc,
            options="--output / --cache",
            then=f"then run the same command with --overwrite ({run_dir} is unchanged)",
        )
    except KeyboardInterrupt as exc:
        click.echo(stopped(signal_of(exc)), err=True, nl=False)
        sys.exit(128 + signal_of(exc))
    report_outcome(outcome)


def _rescore_stopped(run_dir: str, signum: int) -> str:
    """What `rescore` says when a signal stops it."""
    how = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
    return (
        f"\nragbench rescore: {how}; {run_dir} is unchanged, the rescored folder is unfinished (run the same "
        "command with --overwrite)\n"
    )


@click.command("compare")
@click.argument("runs", nargs=-1, required=True)
@click.option(
    "--output",
    default=None,
    help="folder for compare.md (the full report) and compare_N.png, one plot per run compared with the first "
    "(default: print the summary only)",
)
@click.option(
    "--fail-if-worse",
    multiple=True,
    metavar="METRIC:DELTA",
    help="exit 1 when a run is worse than the first by more than DELTA on METRIC (repeatable)",
)
@click.option(
    "--bootstrap-iters",
    default=None,
    type=click.IntRange(min=1),
    help="paired bootstrap resamples  [default: 2000, as the viewer's Compare page]",
)
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0))
@click.option(
    "--p-adjust",
    default="holm",
    show_default=True,
    type=click.Choice(["holm", "bh", "none"]),
    help="adjust the p-values for the number of comparisons shown: Holm (any dependence between rows) or "
    "Benjamini-Hochberg (false discovery rate)",
)
@click.option(
    "--slices/--no-slices",
    default=True,
    show_default=True,
    help="rows per slice value in the full report (--no-slices: each task over all shared examples only)",
)
@click.option(
    "--full",
    is_flag=True,
    help="print the full report (what compare.md holds) instead of the one-screen summary",
)
def compare_command(
    runs: tuple[str, ...],
    output: str | None,
    fail_if_worse: tuple[str, ...],
    bootstrap_iters: int | None,
    seed: int,
    p_adjust: str,
    slices: bool,
    full: bool,
) -> None:
    """Paired comparison of runs on the examples they share: differences, bootstrap intervals, p-values. Prints a
    summary (the rows over all shared examples, one like-for-like verdict per run); --output writes the full
    report, --full prints it."""
    from .._cost.cost_table import cost_markdown, front_lines
    from .._reports.compare.comparison import ITERATIONS
    from .._reports.compare.fail_if_worse import regressions
    from .._reports.compare.full_report import markdown
    from .._reports.compare.summary import summary

    try:
        thresholds = _checked_options(runs, output, fail_if_worse, bootstrap_iters)
        loaded, reports = _compared(runs, bootstrap_iters or ITERATIONS, seed, slices, p_adjust)
        failures = [line for report in reports for line in regressions(report, thresholds)]
    except ConfigError as exc:
        config_error(exc)
    costs = cost_markdown(loaded)  # every run's cost per correct answer and the Pareto front
    text = "\n".join([*(markdown(report) for report in reports), *([costs] if costs else [])])
    if output:
        _write_comparison(Path(output), text, reports, loaded)
    if full:
        click.echo(text)
    if full and output:
        click.echo(f"comparison: {Path(output) / 'compare.md'}")
    if not full:
        where = str(Path(output) / "compare.md") if output else "`--full` prints it, `--output DIR` writes it"
        click.echo(summary(reports, where, front_lines(loaded) if costs else None), nl=False)
    for line in failures:
        click.echo(f"ragbench: worse: {line}", err=True)
    if failures:
        sys.exit(EXIT_WORSE)


def _checked_options(
    runs: tuple[str, ...], output: str | None, fail_if_worse: tuple[str, ...], bootstrap_iters: int | None
) -> dict[str, float]:
    """`compare`'s --fail-if-worse thresholds; `ConfigError` where its options are refused."""
    from .._reports.compare.fail_if_worse import parse_thresholds

    if len(runs) < 2:
        raise ConfigError("compare: give at least two run folders (the first is the baseline)")
    if output and Path(output).exists() and not Path(output).is_dir():
        raise ConfigError(
            f"compare --output {output}: is a file, not a folder; give a folder for compare.md and its plots"
        )
    if output and (unwritable := write_problem(output)):
        raise ConfigError(f"compare --output {output}: {unwritable}; choose a folder that can be written")
    thresholds = parse_thresholds(fail_if_worse)
    if problem := too_many("compare --bootstrap-iters", "bootstrap_iters", bootstrap_iters):
        raise ConfigError(problem)
    return thresholds


def _compared(
    runs: tuple[str, ...], iterations: int, seed: int, slices: bool, p_adjust: str
) -> tuple[list[Run], list[Report]]:
    """`compare`'s runs loaded and a report of each against the first; `ConfigError` where a run folder is
    refused."""
    from .._reports.compare.comparison import adjust_p_values, compare_runs, label_runs, load_run

    loaded = [load_run(path) for path in runs]
    label_runs(loaded)
    judged = command_registry().metric_class  # which keys a judge scores, where the runs' judges differ
    reports = [compare_runs(loaded[0], other, iterations, seed, slices, judged) for other in loaded[1:]]
    adjust_p_values(reports, p_adjust)
    return loaded, reports


def _write_comparison(folder: Path, text: str, reports: list[Report], loaded: list[Run]) -> None:
    """compare.md (`text` and its plots) and the plots into `folder`; a fault of the disk ends the command."""
    try:
        with naming(folder):  # a full disk's error names no file of its own
            folder.mkdir(parents=True, exist_ok=True)
            pictures = compare_plots(reports, loaded, folder)
            images = "".join(f"\n![{p.stem}]({p.name})\n" for p in pictures if p is not None)
            write_atomically(folder / "compare.md", text + images)  # a link there is replaced, not written through
    except OSError as exc:
        environment_error(exc, options="--output")


def compare_plots(reports: list[Any], runs: list[Any], folder: Path) -> list[Path | None]:
    """compare_N.png of each report and compare_cost.png of every run (quality vs cost); none, in one line naming
    what to install, where matplotlib is missing (the plain install has no plotting: compare.md is written without
    its pictures)."""
    from .._reports.compare.plot import cost_plot, plot

    try:
        pictures = [plot(report, folder / f"compare_{i}.png") for i, report in enumerate(reports, 1)]
        return [*pictures, cost_plot(runs, folder / "compare_cost.png")]
    except ImportError:
        click.echo(
            "ragbench: warning: compare.md is written without its plots, which need matplotlib: pip install matplotlib",
            err=True,
        )
        return []


@click.command("view")
@click.argument("runs", nargs=-1)
@click.option("--host", default="127.0.0.1", show_default=True, help="address to serve on")
@click.option(
    "--port",
    default=0,
    type=click.IntRange(0, 65535),
    help="port to serve on (default: a free one; the URL is printed)",
)
@click.option(
    "--export",
    "export_dir",
    default=None,
    metavar="DIR",
    help="write a static site to DIR (opens from disk) instead of serving",
)
def view_command(runs: tuple[str, ...], host: str, port: int, export_dir: str | None) -> None:
    """Browse runs, examples and traces in a web page (RUNS: run folders or folders of runs; default runs/)."""
    from .._view.command import view

    try:
        view(list(runs), host, port, export_dir, command_registry())
    except ConfigError as exc:
        click.echo(f"ragbench: error: {exc}", err=True)
        sys.exit(EXIT_CONFIG)
    except OSError as exc:  # writing the export, or reading a run folder (the runs themselves are never written)
        environment_error(exc, options="--export")


@click.command("reproduce", cls=cloup.Command)
@with_help_groups
@click.argument("name", required=False)
@click.option("--list", "show_list", is_flag=True, help="list the reproductions (paper, table, row, status)")
@with_offers("reproduce")  # the rest is the row's (ragbench._reports.reproduce.rows)
def reproduce_command(
    name: str | None,
    show_list: bool,
    **options: Any,
) -> None:
    """Run a table row of a seed paper as the paper did; print ours beside the paper's numbers."""
    from .._reports.reproduce.rows import (
        compare_with_paper,
        get_reproduction,
        listing,
        markdown,
        reproduction_config,
        verdict,
    )
    from .._reports.results.file import results_text
    from .._storage.files import write_atomically

    registry = command_registry()
    if show_list or not name:
        click.echo(listing(registry))
        return
    limit: int | None = options["limit"]  # a PARTIAL reproduction, said so in its verdict
    try:
        item = get_reproduction(registry, name)
        config, substituted = reproduction_config(item, config_fields(options, "reproduce"))
    except ConfigError as exc:
        config_error(exc)
    outcome = evaluated(config)
    label = verdict(item, limit, substituted, outcome.complete)
    rows = compare_with_paper(item, outcome.typed_results)
    text = markdown(item, rows, label)
    click.echo(text)
    results_path, report = outcome.run_dir / "results.json", outcome.run_dir / "report.md"
    results = outcome.typed_results
    results.reproduction = {
        "name": item.name,
        "verdict": label,
        "substituted": substituted,
        "limit": limit,
        "cells": [{**dataclasses.asdict(row.cell), "ours": row.ours} for row in rows],
    }
    try:  # each file whole or as it was (a full disk)
        write_atomically(results_path, results_text(results))
        with open_file(report, "r") as handle:
            run_report = handle.read().split("\n## Reproduction: ")[0]  # a finished run resumed
        write_atomically(report, run_report + "\n" + text)
    except OSError as exc:
        environment_error(exc, outcome.run_dir)
    click.echo(f"results: {results_path}")
    if not outcome.complete:
        sys.exit(EXIT_INCOMPLETE)

"""Command line: `ragbench --tasks ... --system ...`, `ragbench list`, `ragbench score`, `ragbench index`,
and the commands plugins add (`ragbench_cli_commands`, e.g. `ragbench serve crag-kg`).

Imports stay light here: engines (torch, vLLM) load only when a run starts.
"""
from __future__ import annotations

import dataclasses
import errno
import sqlite3
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import EXIT_CONFIG, EXIT_INCOMPLETE, ConfigError
from ..retrieval.commands import index_group
from ..run.lifecycle import EXIT_INTERRUPTED
from ..run.options import parse_assignments
from .plugin_commands import PluginCommandGroup
from .run_options import (common_kwargs, data_paths, judge_args_of, run_kwargs, split_names, with_common,
                          with_run_options)

EXIT_WORSE = 1  # ragbench compare --fail-if-worse


def _config_error(exc: ConfigError) -> None:
    """Every problem on its own line, then exit 2 (nothing was written)."""
    for line in str(exc).splitlines() or [""]:
        click.echo(f"ragbench: error: {line}", err=True)
    sys.exit(EXIT_CONFIG)


_ENVIRONMENT_FIXES = {errno.ENOSPC: "free space on that disk", errno.EDQUOT: "free space within your disk quota",
                      errno.EROFS: "make it writable, or point --output / --cache / --page-cache elsewhere",
                      errno.EACCES: "make it writable, or point --output / --cache / --page-cache elsewhere",
                      errno.EPERM: "make it writable, or point --output / --cache / --page-cache elsewhere"}


def _environment_error(exc: OSError | sqlite3.Error, run_dir: Any = None) -> None:
    """An OS or SQLite error (a full disk, a read-only path, a failing device): one line naming what,
    where and the fix, then exit 1. What a run finished is saved, so `--resume` goes on from there. Of
    errors raised while cleaning up after one (a full disk fails every write), the first is named."""
    chain = [exc]
    while (earlier := chain[-1].__cause__ or chain[-1].__context__) is not None and earlier not in chain:
        chain.append(earlier)
    exc = next((e for e in reversed(chain) if isinstance(e, OSError) and e.filename), exc)
    if isinstance(exc, OSError):
        what = exc.strerror or type(exc).__name__
        where = exc.filename or "a file ragbench was writing"
        fix = _ENVIRONMENT_FIXES.get(exc.errno, "fix what the error names")
    else:
        what, where, fix = f"SQLite error ({exc})", "a SQLite file", "fix or remove the file it names"
    resumable = run_dir is not None and (Path(run_dir) / "run.json").is_file()
    then = "then run the same command with --resume (what finished is saved)" if resumable else "then run it again"
    click.echo(f"ragbench: error: {what}: {where}; {fix}, {then}", err=True)
    sys.exit(EXIT_INCOMPLETE)


def _run(config_kwargs: dict[str, Any], replay: str | None = None) -> None:
    """Run with these RunConfig fields, or (`replay`) re-execute a recorded run offline."""
    from ..run.evaluator import Evaluator, RunConfig, RunInterrupted
    from ..run.lifecycle import exit_interrupted, exit_when_stuck, interrupt_message
    from ..replay.rerun import replay_config

    config = None
    try:
        config = (replay_config(replay, config_kwargs.get("output"), config_kwargs.get("progress", True))
                  if replay else RunConfig(**config_kwargs))
        with exit_when_stuck(lambda: interrupt_message(config.run_dir())):
            outcome = Evaluator(config).run()
    except ConfigError as exc:
        _config_error(exc)
    except (OSError, sqlite3.Error) as exc:
        _environment_error(exc, config and config.run_dir())
    except RunInterrupted as exc:
        exit_interrupted(exc)
    except KeyboardInterrupt:
        click.echo(interrupt_message(config and config.run_dir()), err=True, nl=False)
        sys.exit(EXIT_INTERRUPTED)
    if outcome.rebuilt:
        click.echo(f"ragbench: {outcome.run_dir}/results.json was missing or unreadable: rebuilt from the saved "
                   "samples", err=True)
    elif outcome.already_finished:
        click.echo(f"ragbench: {outcome.run_dir} is finished and has no failed example: nothing to resume", err=True)
    _report(outcome)


def _report(outcome: Any) -> None:
    """A finished run's summary on the console; exit 1 when it is incomplete."""
    from ..reports.failures import incomplete_reason
    from ..reports.summary import cost_line, failure_lines, results_table

    results = outcome.results
    click.echo(results_table(results))
    click.echo(cost_line(results["cost"]))
    for line in failure_lines(results):
        click.echo(f"ragbench: {line}", err=True)
    click.echo(f"results: {outcome.run_dir / 'results.json'}")
    if not outcome.complete:
        click.echo(f"ragbench: incomplete run ({incomplete_reason(results)})", err=True)
        sys.exit(EXIT_INCOMPLETE)


def _show_version(ctx: click.Context, _param: Any, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        from ..reports.provenance import version_text

        click.echo(version_text())
        ctx.exit()


@click.group(cls=PluginCommandGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
              help="the versions of ragbench, Python and the key packages (for a bug report)")
@click.option("--replay", default=None, metavar="RUN_DIR", help="re-execute a recorded run offline from its calls/ "
              "folder (no model, index or server); writes to --output or RUN_DIR__replay")
@with_run_options
@click.pass_context
def main(ctx: click.Context, replay, **options) -> None:
    """Evaluate a RAG system on benchmark tasks.

    Example: ragbench --tasks demo --system vanilla --limit 5

    `ragbench check` with the same options runs only the pre-flight.
    """
    if ctx.invoked_subcommand is not None:
        return
    if replay:
        _run({"output": options["output"], "progress": not options["no_progress"]}, replay=replay)
        return
    if not split_names(options["tasks"] or ""):
        click.echo(ctx.get_help())
        click.echo("\nragbench: error: --tasks is required (try --tasks demo)", err=True)
        sys.exit(EXIT_CONFIG)
    try:
        kwargs = run_kwargs(**options)
    except ConfigError as exc:
        _config_error(exc)
    _run(kwargs)


@main.command("check")
@click.option("--no-model", is_flag=True, help="skip loading the engines (and the systems' model checks)")
@with_run_options
def check_command(no_model: bool, **options) -> None:
    """The pre-flight of a run with these options, and nothing else: every option, data file,
    tokenizer, service and server checked, then the engines loaded and checked against the system.
    Prints what it checked; exit 2 with every problem listed. Writes nothing."""
    from ..run.evaluator import Evaluator, RunConfig

    if not split_names(options["tasks"] or ""):
        click.echo("ragbench check: error: --tasks is required (the same options as the run)", err=True)
        sys.exit(EXIT_CONFIG)
    try:
        evaluator = Evaluator(RunConfig(**run_kwargs(**options)))
        try:
            if not no_model:
                evaluator.load_and_check_models()
        finally:
            evaluator.retriever.close()
    except ConfigError as exc:
        _config_error(exc)
    except (OSError, sqlite3.Error) as exc:
        _environment_error(exc)
    except KeyboardInterrupt:
        click.echo("\nragbench check: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    for line in evaluator.checks.checked:
        click.echo(f"ok  {line}")
    for line in evaluator.checks.warnings:
        click.echo(f"warning  {line}")
    warned = len(evaluator.checks.warnings)
    click.echo(f"ragbench check: {'ready to run' if not warned else f'can run, with {warned} warning(s) above'} "
               f"(the run folder will be {evaluator.run_dir.path})")


def metric_fits(registry: Any, metric: str) -> str:
    """The tasks whose gold the metric can score (classes are imported, never instantiated)."""
    try:
        cls = registry.load("metrics", metric)
        tasks = [name for name in registry.names("tasks") if cls.fits(registry.load("tasks", name))]
    except Exception as exc:  # a plugin that fails to import is reported, the listing goes on
        return f"unknown ({type(exc).__name__}: {exc})"
    return ", ".join(tasks) or "no installed task"


@main.command("list")
@click.argument("kind", required=False, type=click.Choice(["tasks", "systems", "metrics", "engines", "retrievers", "groups"]))
@click.option("--include-path", multiple=True, metavar="DIR", help="also the YAML tasks under this folder")
def list_command(kind: str | None, include_path: tuple[str, ...]) -> None:
    """Show the installed tasks, systems, metrics and engines (name, description, provider)."""
    from ..registry import KINDS, get_registry
    from ..shared.yaml_tasks.discovery import folder_tasks

    registry = get_registry()
    try:
        for folder in include_path:
            for spec in folder_tasks(folder):
                registry.add_task_file(spec.source)
    except ConfigError as exc:
        _config_error(exc)
    kinds = [kind] if kind else [*KINDS, "groups"]
    for current in kinds:
        click.echo(f"{current}:")
        if current == "groups":
            for group, members in sorted(registry.groups.items()):
                click.echo(f"  {group:<18} {', '.join(members)}")
            continue
        for name in registry.names(current):
            entry = registry.entries[current][name]
            aliases = f" (aliases: {', '.join(entry.aliases)})" if entry.aliases else ""
            click.echo(f"  {name:<18} {entry.description}{aliases}  [{entry.provider}]")
            if current == "metrics":
                click.echo(f"  {'':<18} fits: {metric_fits(registry, name)}")
        if current == "metrics":
            for prefix, family in sorted(registry.metric_families.items()):
                click.echo(f"  {prefix + ':NAME':<18} {family.description}  [{family.provider}]")
        if current == "tasks":
            click.echo("prompt styles of YAML tasks (prompt.style: NAME; docs/yaml-tasks.md):")
            click.echo(f"  {'template':<18} Jinja2 templates (prompt.template), rendered in a sandbox  [ragbench]")
            for name, style in sorted(registry.prompt_styles.items()):
                click.echo(f"  {name:<18} {style.description}  [{style.provider}]")
        if current == "retrievers":
            click.echo("dense query styles (--build-arg/--retriever-arg query_style=NAME):")
            for name, style in sorted(registry.query_styles.items()):
                click.echo(f"  {name:<18} {style.description}  [{style.provider}]")
    for failure in registry.failures:
        click.echo(f"ragbench: plugin '{failure.plugin}' from {failure.provider} failed to load: "
                   f"{failure.error}", err=True)


@main.command("score")
@click.option("--task", "task", required=True, help="task name")
@click.option("--data", "data_file", default=None, help="the task's data file")
@click.option("--predictions", required=True, help='JSONL of {"id": ..., "output": "<raw model text>"}, or a folder '
              "of the benchmark's own output files (OmniEval: *.pred.jsonl)")
@with_common
def score_command(task: str, data_file: str | None, predictions: str, **common) -> None:
    """Score outputs produced elsewhere, exactly as a full run would."""
    try:
        kwargs = {"tasks": [task], "system": "recorded", "system_args": {"path": predictions},
                  "data": {task: data_file} if data_file else {}, **common_kwargs(**common)}
    except ConfigError as exc:
        _config_error(exc)
    _run(kwargs)


@main.command("rescore")
@click.argument("run_dir", metavar="RUN")
@click.option("--metrics", default=None, metavar="NAME[,NAME]", help="NAME,... replaces the run's metrics, +NAME "
              "adds to them, TASK:NAME / TASK:+NAME for one task (default: the run's)")
@click.option("--metric-arg", multiple=True, metavar="METRIC.K=V", help="metric option, added to the run's; "
              "METRIC.key_prefix=P renames a metric's keys")
@click.option("--judge", multiple=True, metavar="MODEL", help="judge engine:model (repeatable; default: the run's)")
@click.option("--judge-arg", multiple=True, metavar="N.K=V", help="engine option of the N-th --judge (from 0)")
@click.option("--nli", default=None, metavar="MODEL", help="NLI engine:model (default: the run's)")
@click.option("--nli-arg", multiple=True, metavar="K=V", help="NLI engine option")
@click.option("--nli-format", default=None, type=click.Choice(["true", "prompt"]), help="(default: the run's)")
@click.option("--output", default=None, help="folder of the rescored run (default: RUN__rescored; RUN is not changed)")
@click.option("--overwrite", is_flag=True, help="replace the run in the output folder")
@click.option("--max-inflight", default=None, type=click.IntRange(min=1), help="examples scored at once (default: "
              "the run's)")
@click.option("--cache", default=None, help="SQLite response cache of the judge and NLI calls (default: in the "
              "output folder; a copy of RUN/cache.sqlite answers the calls RUN made, and RUN stays unchanged)")
@click.option("--bootstrap-iters", default=None, type=click.IntRange(min=0), help="(default: the run's)")
def rescore_command(run_dir: str, metrics: str | None, metric_arg, judge, judge_arg, nli, nli_arg, nli_format,
                    output, overwrite, max_inflight, cache, bootstrap_iters) -> None:
    """Score a finished run's saved predictions again (other metrics, judges or NLI model, or metrics that
    failed) without running the system, into a new run folder."""
    from ..run.rescore_run import rescore_run

    try:
        changes = {"metrics": split_names(metrics) if metrics else None,
                   "metric_args": parse_assignments(metric_arg, "--metric-arg"), "judges": list(judge),
                   "judge_args": judge_args_of(judge_arg, judge), "nli": nli,
                   "nli_args": parse_assignments(nli_arg, "--nli-arg"), "nli_format": nli_format, "output": output,
                   "overwrite": overwrite, "max_inflight": max_inflight, "cache": cache,
                   "bootstrap_iters": bootstrap_iters}
        outcome = rescore_run(run_dir, changes)
    except ConfigError as exc:
        _config_error(exc)
    except (OSError, sqlite3.Error) as exc:
        _environment_error(exc)
    except KeyboardInterrupt:
        click.echo(f"\nragbench rescore: interrupted; {run_dir} is unchanged, the rescored folder is unfinished "
                   "(run the same command with --overwrite)", err=True)
        sys.exit(EXIT_INTERRUPTED)
    _report(outcome)


@main.command("compare")
@click.argument("runs", nargs=-1, required=True)
@click.option("--output", default=None, help="folder for compare.md and compare_N.png, one plot per run compared "
              "with the first (default: print only)")
@click.option("--fail-if-worse", multiple=True, metavar="METRIC:DELTA",
              help="exit 1 when a run is worse than the first by more than DELTA on METRIC (repeatable)")
@click.option("--bootstrap-iters", default=2000, show_default=True, type=int)
@click.option("--seed", default=0, show_default=True, type=int)
def compare_command(runs: tuple[str, ...], output: str | None, fail_if_worse: tuple[str, ...],
                    bootstrap_iters: int, seed: int) -> None:
    """Paired comparison of runs on the examples they share: differences, bootstrap intervals, p-values."""
    from pathlib import Path

    from ..reports.compare import compare_runs, label_runs, load_run, markdown, parse_thresholds, plot, regressions

    try:
        if len(runs) < 2:
            raise ConfigError("compare: give at least two run folders (the first is the baseline)")
        if output and Path(output).exists() and not Path(output).is_dir():
            raise ConfigError(f"compare --output {output}: is a file, not a folder; give a folder for "
                              "compare.md and its plots")
        thresholds = parse_thresholds(fail_if_worse)
        loaded = [load_run(path) for path in runs]
        label_runs(loaded)
        reports = [compare_runs(loaded[0], other, bootstrap_iters, seed) for other in loaded[1:]]
        failures = [line for report in reports for line in regressions(report, thresholds)]
    except ConfigError as exc:
        _config_error(exc)
    text = "\n".join(markdown(report) for report in reports)
    click.echo(text)
    if output:
        folder = Path(output)
        folder.mkdir(parents=True, exist_ok=True)
        pictures = [plot(report, folder / f"compare_{i}.png") for i, report in enumerate(reports, 1)]
        images = "".join(f"\n![{p.stem}]({p.name})\n" for p in pictures if p is not None)
        (folder / "compare.md").write_text(text + images, encoding="utf-8")
        click.echo(f"comparison: {folder / 'compare.md'}")
    for line in failures:
        click.echo(f"ragbench: worse: {line}", err=True)
    if failures:
        sys.exit(EXIT_WORSE)


@main.command("view")
@click.argument("runs", nargs=-1)
@click.option("--host", default="127.0.0.1", show_default=True, help="address to serve on")
@click.option("--port", default=0, type=int, help="port to serve on (default: a free one; the URL is printed)")
@click.option("--export", "export_dir", default=None, metavar="DIR",
              help="write a static site to DIR (opens from disk) instead of serving")
def view_command(runs: tuple[str, ...], host: str, port: int, export_dir: str | None) -> None:
    """Browse runs, examples and traces in a web page (RUNS: run folders or folders of runs; default runs/)."""
    from ..view.command import view

    try:
        view(list(runs), host, port, export_dir)
    except ConfigError as exc:
        click.echo(f"ragbench: error: {exc}", err=True)
        sys.exit(EXIT_CONFIG)


@main.command("reproduce")
@click.argument("name", required=False)
@click.option("--list", "show_list", is_flag=True, help="list the reproductions (paper, table, row, status)")
@click.option("--data", multiple=True, metavar="TASK=PATH", help="local data file for a task")
@click.option("--limit", default=None, type=int, help="first N records per task: a PARTIAL reproduction")
@click.option("--system-arg", multiple=True, metavar="K=V", help="system option (changes what is measured)")
@click.option("--retriever-arg", multiple=True, metavar="K=V", help="retriever option, e.g. index=DIR")
@with_common
def reproduce_command(name: str | None, show_list: bool, data, limit, system_arg, retriever_arg, **common) -> None:
    """Run a table row of a seed paper as the paper did; print ours beside the paper's numbers."""
    import json

    from ..run.evaluator import Evaluator, RunInterrupted
    from ..run.lifecycle import exit_interrupted
    from ..registry import get_registry
    from ..storage.files import write_atomically
    from ..reports.reproduce import compare_with_paper, get_reproduction, listing, markdown, reproduction_config, verdict

    registry = get_registry()
    if show_list or not name:
        click.echo(listing(registry))
        return
    config = None
    try:
        item = get_reproduction(registry, name)
        overrides = {**common_kwargs(**common), "data": data_paths(data), "limit": limit,
                     "system_args": parse_assignments(system_arg, "--system-arg"),
                     "retriever_args": parse_assignments(retriever_arg, "--retriever-arg")}
        config, substituted = reproduction_config(item, overrides)
        outcome = Evaluator(config).run()
    except ConfigError as exc:
        _config_error(exc)
    except (OSError, sqlite3.Error) as exc:
        _environment_error(exc, config and config.run_dir())
    except RunInterrupted as exc:
        exit_interrupted(exc)
    label = verdict(item, limit, substituted, outcome.complete)
    rows = compare_with_paper(item, outcome.results)
    text = markdown(item, rows, label)
    click.echo(text)
    results_path = outcome.run_dir / "results.json"
    results = json.loads(results_path.read_text(encoding="utf-8"))
    results["reproduction"] = {"name": item.name, "verdict": label, "substituted": substituted, "limit": limit,
                               "cells": [{**dataclasses.asdict(row.cell), "ours": row.ours} for row in rows]}
    write_atomically(results_path, json.dumps(results, indent=2, ensure_ascii=False, default=str) + "\n")
    report = outcome.run_dir / "report.md"
    write_atomically(report, report.read_text(encoding="utf-8") + "\n" + text)
    click.echo(f"results: {results_path}")
    if not outcome.complete:
        sys.exit(EXIT_INCOMPLETE)


main.add_command(index_group)

if __name__ == "__main__":
    main()

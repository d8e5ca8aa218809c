"""Command line: `ragbench --tasks ... --system ...`, `ragbench list`, `ragbench score`, `ragbench index`, `ragbench export`,
`ragbench gate`,
and the commands plugins add (`ragbench_cli_commands`, e.g. `ragbench serve crag-kg`).

Imports stay light here: engines (torch, vLLM) load only when a run starts.
"""

from __future__ import annotations

import io
import sys
from typing import Any

import click
import cloup

from .._config.output import RunOutput
from .._config.run_config import RunConfig
from .._errors import EXIT_CONFIG, EXIT_INCOMPLETE, ConfigError
from .._stop_signals import signal_of, stopped_by
from .._values.environment import environment_problems
from .cache.command import cache_command
from .console import GuardedStream
from .export_commands import export_group
from .gate_command import gate_command
from .index.commands import index_group
from .install_hints import for_this_install
from .outcomes import config_error, environment_error, evaluated, run_starting, show_outcome
from .registry import command_registry
from .run.estimate import DEFAULT_PILOT, DEFAULT_PRECISION, estimate_command, show_estimate
from .run.help_groups import GroupedHelpGroup, with_help_groups
from .run.option_values import config_fields, group_fields, run_config_of, split_names
from .run.options import with_offers, with_run_options
from .run.trackers import (
    exit_after_logging,
    log_command,
    log_finished_run,
    requested_trackers,
    with_tracker_options,
)
from .run_folder_commands import compare_command, reproduce_command, rescore_command, view_command


def run_config(ctx: click.Context, replay: str | None, options: dict[str, Any]) -> RunConfig:
    """The run's RunConfig: these options', or (`replay`) that of a recorded run re-executed offline."""
    if replay:
        from .._replay.rerun import replay_config
        from .._run.plan.data_paths import with_data_paths
        from .._run.plan.task_files import with_task_files

        output = RunOutput(**group_fields(options, RunOutput))
        folders = options.get("include_path", ())  # where the run's task files are now, when they moved
        return replay_config(
            replay,
            output=output.output,
            progress=output.progress,
            resume=output.resume,
            overwrite=output.overwrite,
            found=lambda recorded, fingerprints: with_task_files(
                with_data_paths(recorded, fingerprints, f"--replay {replay}"), folders, f"--replay {replay}"
            ),
        )
    if not split_names(options["tasks"] or ""):
        click.echo(ctx.get_help())
        click.echo("\nragbench: error: --tasks is required (try --tasks demo)", err=True)
        sys.exit(EXIT_CONFIG)
    return run_config_of(options)


def estimate_run(ctx: click.Context, replay: str | None, options: dict[str, Any]) -> None:
    """`--estimate`: the estimate of the run these options name (`ragbench estimate`'s, its default pilot grown for
    the dollars within 10%), then stop; --replay is refused (a replay costs nothing)."""
    if replay:
        config_error(ConfigError("--estimate with --replay: a replayed run calls no model; run it without --estimate"))
    run_config(ctx, None, options)  # --tasks required, every option read: a bad one ends here in one line
    show_estimate(DEFAULT_PILOT, False, options, DEFAULT_PRECISION)


def run_and_report(config: RunConfig, trackers: list[Any]) -> None:
    """Run, print the summary, log the finished run to the trackers asked for; exit 1 when the run is
    incomplete, 75 when it is complete but a tracker's logging failed."""
    outcome = evaluated(config)
    if outcome.rebuilt:
        click.echo(
            f"ragbench: {outcome.run_dir}/results.json was missing or unreadable: rebuilt from the saved samples",
            err=True,
        )
    elif outcome.already_finished:
        click.echo(f"ragbench: {outcome.run_dir} is finished and has no failed example: nothing to resume", err=True)
    show_outcome(outcome)
    exit_after_logging(log_finished_run(outcome.run_dir, trackers) if trackers else [], outcome.complete)
    if not outcome.complete:
        sys.exit(EXIT_INCOMPLETE)


def alias_lines(registry: Any, names: list[str]) -> list[str]:
    """A line for each name of --tasks that is another task's alias (`fever` runs PubHealth): a run's results
    are under the task's own name, and the user should not believe they evaluated another benchmark."""
    lines = []
    for name in names:
        if name in registry.groups or name not in registry.aliases["tasks"]:
            continue
        task = registry.aliases["tasks"][name]
        description = registry.entries["tasks"][task].description.split(" (")[0]
        lines.append(f"--tasks {name} is an alias of task {task} ({description}): its results are under {task}")
    return lines


def _show_version(ctx: click.Context, _param: Any, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        from .._reports.results.provenance import version_text

        click.echo(version_text())
        ctx.exit()


def escape_unprintable() -> None:
    """Text the console's encoding cannot hold (a lone surrogate such as "\\ud800" from a data file, a
    label on an ASCII console) is printed as its escape (\\udXXX), never a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, (io.TextIOWrapper, GuardedStream)):
            stream.reconfigure(errors="backslashreplace")


@click.group(
    cls=GroupedHelpGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]}
)
@with_help_groups
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="the versions of ragbench, Python and the key packages (for a bug report)",
)
@click.option(
    "--replay",
    default=None,
    metavar="RUN_DIR",
    help="re-execute a recorded run offline from its calls/ "
    "folder (no model, index or server); writes to --output or RUN_DIR__replay (--include-path DIR: where its YAML "
    "task files are now, if they moved)",
)
@click.option(
    "--estimate",
    is_flag=True,
    help="print what the run will cost and stop: `ragbench estimate` with these options (a 5% pilot, grown until the "
    "dollars are within 10%, run in the run folder, which --resume reuses); nothing else runs",
)
@with_run_options
@with_tracker_options
@click.pass_context
def main(ctx: click.Context, /, replay: str | None, estimate: bool, **options: Any) -> None:
    """Evaluate a RAG system on benchmark tasks.

    Example: ragbench --tasks demo --system vanilla --limit 5

    `ragbench check` with the same options runs only the pre-flight.
    """
    escape_unprintable()
    problems = environment_problems()  # every command: a typo is never read as the default
    for problem in problems:
        click.echo(f"ragbench: error: {problem}", err=True)
    if problems:
        sys.exit(EXIT_CONFIG)
    if ctx.invoked_subcommand is not None:
        return
    with run_starting():  # a stop signal or a bad option here ends in its own line: nothing is written yet
        trackers = requested_trackers(options)
        if estimate:
            estimate_run(ctx, replay, options)
            return
        config = run_config(ctx, replay, options)
        for line in alias_lines(command_registry(), config.what.tasks):
            click.echo(f"ragbench: {line}", err=True)
    run_and_report(config, trackers)


@main.command("check", cls=cloup.Command)
@with_help_groups
@click.option("--no-model", is_flag=True, help="skip loading the engines (and the systems' model checks)")
@with_run_options
@with_tracker_options
def check_command(no_model: bool, **options: Any) -> None:
    """The pre-flight of a run with these options, and nothing else: every option, data file,
    tokenizer, service and server checked, then the engines loaded and checked against the system.
    Prints what it checked; exit 2 with every problem listed. Writes nothing."""
    import sqlite3

    from .._run.evaluator import Evaluator
    from .._run.plan.planning import run_registry

    if not split_names(options["tasks"] or ""):
        click.echo("ragbench check: error: --tasks is required (the same options as the run)", err=True)
        sys.exit(EXIT_CONFIG)
    try:
        trackers = requested_trackers(options)
        config = run_config_of(options)
        evaluator = Evaluator(config, run_registry(config.what, command_registry()))
        evaluator.check_free_space()
        evaluator.check_services(models=not no_model)
    except ConfigError as exc:
        config_error(exc)
    except (OSError, sqlite3.Error) as exc:
        environment_error(exc)
    except KeyboardInterrupt as exc:
        click.echo(f"\nragbench check: {stopped_by(signal_of(exc))}; it writes nothing: run it again", err=True)
        sys.exit(128 + signal_of(exc))
    for line in evaluator.checks.checked:
        click.echo(f"ok  {line}")
    for tracker in trackers:
        click.echo(f"ok  logging to {tracker.label}: its package is installed")
    for line in evaluator.checks.warnings:
        click.echo(f"warning  {for_this_install(line)}")
    warned = len(evaluator.checks.warnings)
    click.echo(
        f"ragbench check: {'ready to run' if not warned else f'can run, with {warned} warning(s) above'} "
        f"(the run folder will be {evaluator.run_dir.path})"
    )


SHORT_FITS = 8  # a metric that fits up to this many tasks names them; more are counted by group


def metric_fits(registry: Any, metric: str, verbose: bool = False) -> str:
    """The tasks whose gold the metric can score (classes are imported, never instantiated): named when few
    (or `verbose`), else counted by the task groups they belong to."""
    from .._metric import fits

    try:
        cls = registry.load("metrics", metric)
        tasks = [name for name in registry.names("tasks") if fits(cls, registry.load("tasks", name))]
    except Exception as exc:  # a plugin that fails to import is reported, the listing goes on
        return f"unknown ({type(exc).__name__}: {exc})"
    if not tasks:
        return "no installed task"
    if verbose or len(tasks) <= SHORT_FITS:
        return ", ".join(tasks)
    counts = ", ".join(f"{group} {count}" for group, count in counts_by_group(tasks, registry.groups).items())
    return f"{len(tasks)} tasks ({counts}; --verbose names them)"


def counts_by_group(tasks: list[str], groups: dict[str, list[str]]) -> dict[str, int]:
    """How many of `tasks` each group holds, a task counted once, in the largest group that has it (a task in
    none: `other`, last); largest counts first."""
    by_size = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    counts: dict[str, int] = {}
    for task in tasks:
        group = next((name for name, members in by_size if task in members), "other")
        counts[group] = counts.get(group, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (item[0] == "other", -item[1], item[0])))


@main.command("list")
@click.argument(
    "kind",
    required=False,
    type=click.Choice(["tasks", "systems", "metrics", "engines", "retrievers", "rerankers", "refiners", "groups"]),
)
@click.option("--include-path", multiple=True, metavar="DIR", help="also the YAML tasks under this folder")
@click.option("--verbose", "-v", is_flag=True, help="name every task a metric fits (else counted by group when many)")
def list_command(kind: str | None, include_path: tuple[str, ...], verbose: bool) -> None:
    """Show the installed tasks, systems, metrics and engines (name, description, provider)."""
    from .._catalog import KINDS
    from .._yaml_tasks.discovery import folder_tasks

    registry = command_registry()
    try:
        for folder in include_path:
            for header in folder_tasks(folder):
                registry.add_task_file(header.source)
    except ConfigError as exc:
        config_error(exc)
    registry.check_task_files()  # a broken file no run reads is reported all the same
    kinds = [kind] if kind else [*KINDS, "groups"]
    for current in kinds:
        click.echo(f"{current}:")
        if current == "groups":
            width = max([18, *map(len, registry.groups)])  # the names' column, as wide as the longest name
            for group, members in sorted(registry.groups.items()):
                click.echo(f"  {group:<{width}} {', '.join(members)}")
            continue
        names = registry.names(current)
        width = max([18, *map(len, names)])
        for name in names:
            entry = registry.entries[current][name]
            aliases = f" (aliases: {', '.join(entry.aliases)})" if entry.aliases else ""
            click.echo(f"  {name:<{width}} {entry.description}{aliases}  [{entry.provider}]")
            if current == "metrics":
                click.echo(f"  {'':<{width}} fits: {metric_fits(registry, name, verbose)}")
        if current == "metrics":
            for prefix, family in sorted(registry.metric_families.items()):
                click.echo(f"  {prefix + ':NAME':<{width}} {family.description}  [{family.provider}]")
        if current == "tasks":
            click.echo("prompt styles of YAML tasks (prompt.style: NAME; docs/yaml-tasks.md):")
            click.echo(f"  {'template':<{width}} Jinja2 templates (prompt.template), rendered in a sandbox  [ragbench]")
            for name, style in sorted(registry.prompt_styles.items()):
                click.echo(f"  {name:<{width}} {style.description}  [{style.provider}]")
        if current == "retrievers":
            click.echo("dense query styles (--build-arg/--retriever-arg query_style=NAME):")
            for name, style in sorted(registry.query_styles.items()):
                click.echo(f"  {name:<{width}} {style.description}  [{style.provider}]")
    for failure in registry.every_failure():
        click.echo(
            f"ragbench: plugin '{failure.plugin}' from {failure.provider} failed to load: {failure.error}", err=True
        )


@main.command("score", cls=cloup.Command)
@with_help_groups
@click.option("--task", "task", required=True, help="task name")
@click.option("--data", "data_file", default=None, help="the task's data file")
@click.option(
    "--predictions",
    default=None,
    help='JSONL of {"id": ..., "output": "<raw model text>"}, or a folder '
    "of the benchmark's own output files (OmniEval: *.pred.jsonl)",
)
@click.option(
    "--traces",
    default=None,
    help="an application's exported traces (OTLP/JSON, Phoenix's or Langfuse's spans) as the predictions: each trace "
    "answers the example its spans' --match-attribute names (docs/apps.md)",
)
@click.option(
    "--trace-format",
    type=click.Choice(["otlp", "phoenix", "langfuse"]),
    default="otlp",
    show_default=True,
    help="the --traces file's format",
)
@click.option(
    "--match-attribute",
    default="ragbench.example.id",
    show_default=True,
    help="the span attribute that holds the example's id in --traces",
)
@with_offers("score")  # the system is the predictions' (`recorded`) or the traces' (`traced`), its task the one --task
@with_tracker_options
def score_command(
    task: str,
    data_file: str | None,
    predictions: str | None,
    traces: str | None,
    trace_format: str,
    match_attribute: str,
    **options: Any,
) -> None:
    """Score outputs produced elsewhere, exactly as a full run would."""
    with run_starting():
        if (predictions is None) == (traces is None):
            raise ConfigError("ragbench score: give --predictions FILE or --traces FILE (one of them)")
        trackers = requested_trackers(options)
        system, system_args = (
            ("recorded", {"path": predictions})
            if predictions is not None
            else ("traced", {"path": traces, "format": trace_format, "match": match_attribute})
        )
        config = RunConfig.of(
            tasks=[task],
            system=system,
            system_args=system_args,
            data={task: data_file} if data_file else {},
            **config_fields(options, "score"),
        )
    run_and_report(config, trackers)


for command in (
    index_group,
    cache_command,
    export_group,
    rescore_command,
    compare_command,
    gate_command,
    view_command,
    reproduce_command,
    log_command,
    estimate_command,
):
    main.add_command(command)

if __name__ == "__main__":
    from .process_end import end_process

    end_process(main)

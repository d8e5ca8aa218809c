"""`ragbench export`: a finished run's files in the formats other tools read. `export trec` writes the run's
retrieval as a TREC run file; benchmarks add their own (`export browsecomp-plus`, through the
`ragbench_cli_commands` hook)."""

from __future__ import annotations

from pathlib import Path

import click

from .._errors import ConfigError
from .plugin_commands import config_errors_exit


@click.group("export")
def export_group() -> None:
    """Write a finished run's files in the formats other tools read."""


def output_path(run_dir: str, output: str | None, default_name: str, overwrite: bool) -> Path:
    """`output`, or `default_name` beside the run folder, checked as an output file (`check_output`)."""
    from .._storage.output_files import check_output

    path = Path(output) if output else Path(run_dir).resolve().parent / default_name
    check_output(path, overwrite, "export trec")
    return path


@export_group.command("trec")
@click.argument("run_dir", metavar="RUN")
@click.option("--task", default=None, help="the task whose retrieval to write (default: the run's only task)")
@click.option("--output", default=None, help="the run file to write (default: RUN__TASK.trec beside RUN)")
@click.option(
    "--tag", default=None, help="the file's last column, the run's name (default: RUN's folder name, blanks as _)"
)
@click.option("--overwrite", is_flag=True, help="replace the output file")
def export_trec(run_dir: str, task: str | None, output: str | None, tag: str | None, overwrite: bool) -> None:
    """A TREC run file of the documents each example showed (`qid Q0 docid rank score tag`, trec_eval's input):
    each document once, at its first rank, scored so that trec_eval reads the ranking shown."""
    from .._reports.results.finished_run import finished_run
    from .._reports.results.run_rankings import run_rankings, run_task
    from .._retrieval.trec.run_file import run_tag, trec_run_text
    from .._storage.files import naming, write_atomically

    with config_errors_exit("--output"):
        run = finished_run(run_dir, "export trec")
        task = run_task(run, task)
        path = output_path(run_dir, output, f"{Path(run_dir).resolve().name}__{task}.trec", overwrite)
        ranked = run_rankings(run, task)
        try:
            text = trec_run_text(ranked.rankings, tag or run_tag(run.path.resolve().name))
        except ValueError as exc:
            raise ConfigError(f"export trec: {exc}") from None
        with naming(path):
            write_atomically(path, text)
    lines = text.count("\n")
    click.echo(f"TREC run file: {path} ({lines} lines, {len(ranked.rankings)} examples of {task})")
    if ranked.left_out:
        click.echo(
            f"ragbench: export trec: not in it: {ranked.left_out_text()} (trec_eval -c counts each query of the "
            f"qrels it lacks 0); finish failed examples with `ragbench ... --resume --output {run.path}`",
            err=True,
        )

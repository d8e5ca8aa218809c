"""`ragbench export dragun RUN`: a finished run of dragun_report as DRAGUN's Task 2 run file (submission.py), one
line per topic, added to `ragbench export` (tasks/__init__.py)."""

from __future__ import annotations

import json
from pathlib import Path

import click

TASK = "dragun_report"


@click.command("dragun")
@click.argument("run_dir", metavar="RUN")
@click.option("--output", default=None, help="the run file to write (default: RUN__dragun_report beside RUN)")
@click.option("--run-id", default=None, help="the submission's run_id (default: the run folder's name)")
@click.option("--team-id", default="ragbench", show_default=True, help="metadata.team_id")
@click.option("--overwrite", is_flag=True, help="replace an earlier export at --output")
def export_dragun(run_dir: str, output: str | None, run_id: str | None, team_id: str, overwrite: bool) -> None:
    """DRAGUN's Task 2 run file from a finished run: per topic its report's sentences, each citing the docids of
    the MS MARCO V2.1 segments it rests on."""
    from ragbench.api.run import config_errors_exit

    with config_errors_exit("--output"):
        lines = export(run_dir, output, run_id, team_id, overwrite)
    for line in lines:
        click.echo(line)


def export(run_dir: str, output: str | None, run_id: str | None, team_id: str, overwrite: bool) -> list[str]:
    from ragbench.api import ConfigError
    from ragbench.api.retrieval import run_tag
    from ragbench.api.run import check_output, finished_run, write_atomically

    from .submission import responses, submission_line
    from .task import MOST_WORDS

    run = finished_run(run_dir, "export dragun")
    if TASK not in run.results.results:
        raise ConfigError(f"export dragun: {run.path} did not run {TASK}")
    unscored = run.results.counts[TASK]["failed"] + run.results.counts[TASK]["missing"]
    if unscored:
        raise ConfigError(
            f"export dragun: {unscored} topic(s) of {run.path} failed or are missing, and a run file reports on "
            f"every topic: finish them with `ragbench ... --resume --output {run.path}`"
        )
    path = Path(output) if output else run.path.resolve().parent / f"{run.path.resolve().name}__{TASK}"
    check_output(path, overwrite, "export dragun")
    tag = run_id or run_tag(run.path.resolve().name)
    written, dropped, long = [], 0, []
    for record in run.records(TASK, why="the reports to export"):
        if record.bad_record or record.id is None or record.error is not None:
            continue
        answer, unknown = responses(record.answer, list(record.docs))
        dropped += unknown
        if (words := sum(len(sentence["text"].split()) for sentence in answer)) > MOST_WORDS:
            long.append(f"{record.id} ({words} words)")
        written.append(submission_line(record.id, answer, tag, team_id))
    write_atomically(path, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in written))
    lines = [f"DRAGUN Task 2 run file: {path} ({len(written)} topics, run_id {tag})"]
    if dropped:
        lines.append(f"{dropped} citation(s) named no segment shown and were left out")
    if long:
        lines.append(f"over the track's {MOST_WORDS} words (split at whitespace): {', '.join(long)}")
    return lines

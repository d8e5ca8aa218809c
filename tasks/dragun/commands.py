"""`ragbench export dragun RUN`: a finished run of dragun_report or dragun_questions as DRAGUN's Task 2 run file
(submission.py, one JSON line per topic) or Task 1 run file (question_runs.py, one TSV line per question), added to
`ragbench export` (tasks/__init__.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ragbench.api.run import submission_options

TASKS = ("dragun_report", "dragun_questions")


@click.command("dragun")
@click.argument("run_dir", metavar="RUN")
@click.option(
    "--task",
    "task",
    type=click.Choice(TASKS),
    default=None,
    help="the task to export (default: the one DRAGUN task the run ran)",
)
@submission_options("RUN__TASK")
def export_dragun(
    run_dir: str, task: str | None, output: str | None, run_id: str | None, team_id: str, overwrite: bool
) -> None:
    """DRAGUN's run file from a finished run: Task 2, per topic its report's sentences, each citing the docids of
    the MS MARCO V2.1 segments it rests on; Task 1, per topic its ranked questions."""
    from ragbench.api.run import echo_lines_of

    echo_lines_of(lambda: export(run_dir, task, output, run_id, team_id, overwrite), "--output")


def export(
    run_dir: str, task: str | None, output: str | None, run_id: str | None, team_id: str, overwrite: bool
) -> list[str]:
    from ragbench.api import ConfigError
    from ragbench.api.retrieval import run_tag
    from ragbench.api.run import check_output, finished_run, write_atomically

    run = finished_run(run_dir, "export dragun")
    ran = [name for name in TASKS if name in run.results.results]
    if task is None and len(ran) != 1:
        raise ConfigError(
            f"export dragun: {run.path} ran {' and '.join(ran) or 'neither of ' + ', '.join(TASKS)}: name the task "
            "to export with --task"
        )
    task = task or ran[0]
    if task not in ran:
        raise ConfigError(f"export dragun: {run.path} did not run {task}")
    run.every_example_scored(task, "topic", "a run file reports on every topic")
    path = Path(output) if output else run.path.resolve().parent / f"{run.path.resolve().name}__{task}"
    check_output(path, overwrite, "export dragun")
    tag = run_id or run_tag(run.path.resolve().name)
    records = [
        record
        for record in run.records(task, why="the answers to export")
        if not (record.bad_record or record.id is None or record.error is not None)
    ]
    text, lines = (report_file if task == "dragun_report" else question_file)(records, tag, team_id)
    write_atomically(path, text)
    return [
        f"DRAGUN {'Task 2' if task == 'dragun_report' else 'Task 1'} run file: {path} ({lines[0]}, run_id {tag})",
        *lines[1:],
    ]


def report_file(records: list[Any], tag: str, team_id: str) -> tuple[str, list[str]]:
    """Task 2's run file and what to say of it: its topics, the citations left out, the reports over the limit."""
    from .submission import responses, submission_line
    from .task import MOST_WORDS

    written, dropped, long = [], 0, []
    for record in records:
        answer, unknown = responses(record.answer, list(record.docs))
        dropped += unknown
        if (words := sum(len(sentence["text"].split()) for sentence in answer)) > MOST_WORDS:
            long.append(f"{record.id} ({words} words)")
        written.append(submission_line(record.id, answer, tag, team_id))
    lines = [f"{len(written)} topics"]
    if dropped:
        lines.append(f"{dropped} citation(s) named no segment shown and were left out")
    if long:
        lines.append(f"over the track's {MOST_WORDS} words (split at whitespace): {', '.join(long)}")
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in written), lines


def question_file(records: list[Any], tag: str, team_id: str) -> tuple[str, list[str]]:
    """Task 1's run file and what to say of it: its topics and questions, the topics with other than 10."""
    from .question_runs import MOST_QUESTIONS, ranked, tsv_lines

    text, count, other = "", 0, []
    for record in records:
        found = ranked(record.answer or "")
        count += len(found)
        if len(found) != MOST_QUESTIONS:
            other.append(f"{record.id} ({len(found)})")
        text += tsv_lines(record.id, found, tag, team_id)
    lines = [f"{len(records)} topics, {count} questions"]
    if other:
        lines.append(f"not the track's {MOST_QUESTIONS} questions (all are written and judged): {', '.join(other)}")
    return text, lines

"""`ragbench export trec-rag RUN`: a finished run of trec_rag24 or trec_rag25 as the generation task's submission
JSONL (ag_output.py), one line per topic, added to `ragbench export` (tasks/__init__.py)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ragbench.api.run import submission_options

TASKS = {"trec_rag24": (2024, 20), "trec_rag25": (2025, 100)}  # year, the most references a line may hold


@click.command("trec-rag")
@click.argument("run_dir", metavar="RUN")
@click.option("--task", "task", type=click.Choice(sorted(TASKS)), default=None, help="the task (default: the run's)")
@submission_options("RUN__TASK.jsonl")
def export_trec_rag(
    run_dir: str, task: str | None, output: str | None, run_id: str | None, team_id: str, overwrite: bool
) -> None:
    """TREC RAG's AG/RAG submission file from a finished run: per topic its references (the docids of the
    segments shown, at most 20 in 2024 and 100 in 2025) and its answer's sentences, citations as reference indices."""
    from ragbench.api.run import echo_lines_of

    echo_lines_of(lambda: export(run_dir, task, output, run_id, team_id, overwrite), "--output")


def export(
    run_dir: str, task: str | None, output: str | None, run_id: str | None, team_id: str, overwrite: bool
) -> list[str]:
    from ragbench.api import ConfigError
    from ragbench.api.retrieval import run_tag
    from ragbench.api.run import check_output, finished_run, write_atomically

    from .ag_output import (
        Submission2024,
        Submission2025,
        citing_twice,
        response_length,
        sentences,
        submission,
        system_prompt,
    )
    from .submitted_topics import MOST_WORDS, long_answers_line

    run = finished_run(run_dir, "export trec-rag")
    ran = [name for name in TASKS if name in run.results.results]
    if task is None and len(ran) != 1:
        raise ConfigError(
            f"export trec-rag: {run.path} ran {', '.join(ran) or 'neither trec_rag24 nor trec_rag25'}: give --task"
        )
    task = task or ran[0]
    if task not in run.results.results:
        raise ConfigError(f"export trec-rag: {run.path} did not run {task}")
    run.every_example_scored(task, "topic", "a submission answers every topic")
    year, most = TASKS[task]
    path = Path(output) if output else run.path.resolve().parent / f"{run.path.resolve().name}__{task}.jsonl"
    check_output(path, overwrite, "export trec-rag")
    tag = run_id or run_tag(run.path.resolve().name)
    written: list[Submission2024 | Submission2025] = []
    dropped = cut = twice = 0
    long: list[str] = []
    for record in run.records(task, why="the answers to export"):
        if record.bad_record or record.id is None or record.error is not None:
            continue
        references = list(dict.fromkeys(str(doc.id) for doc in record.docs if doc.id is not None))
        cut += max(0, len(references) - most)
        answer, unknown = sentences(record.answer, shown=min(len(references), most))
        dropped += unknown
        twice += citing_twice(record.answer)
        if (words := response_length(answer)) > MOST_WORDS:
            long.append(f"{record.id} ({words} words)")
        prompt = system_prompt(record.trace) if year == 2025 else None
        written.append(submission(year, record.id, record.question, references[:most], answer, tag, team_id, prompt))
    write_atomically(path, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in written))
    lines = [f"TREC RAG {year} submission: {path} ({len(written)} topics, run_id {tag})"]
    if cut:
        lines.append(f"{cut} segment(s) shown past the first {most} left out of references (the track's limit)")
    if dropped:
        lines.append(f"{dropped} citation(s) named no segment in references and were left out")
    if long:
        lines.append(long_answers_line(long))
    if twice:
        lines.append(f"{twice} sentence(s) cited one segment twice, written once (rag24_validation warns of it)")
    return lines

"""DRAGUN's Task 1 run format (the resources README, the starter kit's produce_run.py): a TSV file without a
header, one question a line, `topic_id, team, run_tag, run_question_rank, run_question_text`. auto_judge.py reads
it with pandas (tab-separated, `"` quoting) and takes the run tag from the file's name, not its third column.

A ragbench answer is a ranked list of questions, one a line, read as the metric reads it (`ranked`, the
api's `list_lines`: list markers off, a preamble left out). `tsv_lines` writes them as the run file's lines;
`run_records` reads a run file as `ragbench score` records, each topic's questions with their ranks in its
extras.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from ragbench.api import RecordError
from ragbench.api.data import JsonObject, NotUtf8, given_bytes, utf8
from ragbench.api.text import list_lines

MOST_QUESTIONS = 10  # "output 10 ranked investigative questions" (the resources README)
SUBMITTED = "dragun_questions"  # a scored run file's questions as submitted (dragun_question_autojudge reads them)
FIELDS = ("topic_id", "team", "run_tag", "run_question_rank", "run_question_text")


def ranked(answer: str) -> list[tuple[int, str]]:
    """The answer's questions, ranked in the order written."""
    return list(enumerate(list_lines(answer), 1))


def tsv_lines(topic_id: str, ranked: list[tuple[int, str]], run_tag: str, team: str) -> str:
    """A topic's questions as run file lines (csv quoting where a question holds a `"`, as pandas reads it back)."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    for rank, text in ranked:
        writer.writerow([topic_id, team, run_tag, rank, " ".join(text.split())])
    return out.getvalue()


def submitted_answer(ranked: list[tuple[int, str]]) -> str:
    return "\n".join(f"{rank}. {text}" for rank, text in ranked)


def tsv_rows(path: Path) -> Iterator[tuple[int, tuple[str, int, str] | RecordError]]:
    """A run file's lines as (topic, rank, question) in the file's order; a line that is not five fields with an
    integer rank, or a file that is not UTF-8, is a RecordError naming it."""
    try:
        text = utf8(given_bytes(path, "a DRAGUN Task 1 run file (TSV)"))
    except NotUtf8 as exc:
        yield 0, RecordError(str(path), exc.line, str(exc))
        return
    for index, row in enumerate(csv.reader(io.StringIO(text, newline=""), delimiter="\t")):
        if not row:
            continue  # pandas skips blank lines
        if len(row) != len(FIELDS) or not row[3].strip().lstrip("-").isdigit():
            wanted = f"expected {len(FIELDS)} tab-separated fields ({', '.join(FIELDS)}), the rank an integer"
            yield index, RecordError(str(path), index + 1, wanted)
            continue
        yield index, (row[0], int(row[3]), row[4])


def run_records(path: Path) -> Iterator[tuple[int, JsonObject | RecordError]]:
    """A run file as `ragbench score` records, one a topic in the order first seen, its questions in rank order
    (auto_judge.py sorts them so); a bad line is a RecordError (tsv_rows)."""
    by_topic: dict[str, list[tuple[int, str]]] = {}
    first_line: dict[str, int] = {}
    for index, row in tsv_rows(path):
        if isinstance(row, RecordError):
            yield index, row
            continue
        topic_id, rank, text = row
        by_topic.setdefault(topic_id, []).append((rank, text))
        first_line.setdefault(topic_id, index)
    for topic_id, found in by_topic.items():
        ordered = sorted(found, key=lambda question: question[0])
        extras: JsonObject = {SUBMITTED: [{"rank": rank, "text": text} for rank, text in ordered]}
        yield first_line[topic_id], {"id": topic_id, "output": submitted_answer(ordered), "extras": extras}

"""A folder of submissions read as castorini's tools read it, and what they would say of it, in notes (one line
each, beside the scores: `ragbench score` lists them in the report and on the console).

- nuggetizer's assign_nuggets.py assigns every topic of the nugget file, a topic no submission line answers an
  empty answer (all its nuggets not_support, no call), and calculate_metrics.py averages over every topic; a line
  of a topic the nugget file does not hold is not read. So here: a judged topic no line answers is scored as an
  empty answer showing no segment (`missing_topics=empty`: 0 in every mean over the judged topics, as `trec_eval
  -c` counts it too), or fails (`missing_topics=failed`, the mean then over the topics answered); a line of a topic
  the qrels do not judge is left out.
- ragnarok's rag24_validation warns of an answer over 400 words (the NFKC words of its sentences) and of a
  sentence citing one reference twice: each counted and named.
- ragnarok's rag25_validation refuses a 2025 line it finds errors in (rag25_checks.py; one ragbench reads, such as
  one without a team_id): each named with its first error.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ragbench.api import RecordError

MISSING_TOPICS = ("empty", "failed")
MOST_WORDS = 400  # rag24_validation's limit
WORDS, TWICE = "response_words", "citing_twice"  # each read line's extras: its word count, sentences citing twice
REFUSED_2025 = "rag25_errors"  # a 2025 line's extras: the errors rag25_validation finds in it


def read_as_castorini(
    records: Iterable[tuple[int, Any]], judged: list[str], missing: str, task: str
) -> Iterator[tuple[int, Any]]:
    """`records` (submission_records) with the lines of unjudged topics left out and, for `missing="empty"`, an
    empty answer for each judged topic no line answers; then the notes (strings) saying so."""
    known, answered, unjudged = set(judged), set(), []
    long: list[str] = []
    twice: list[str] = []
    refused: list[str] = []
    sentences = last = 0
    for index, record in records:
        last = index + 1
        if isinstance(record, RecordError):
            yield index, record
            continue
        topic = record["id"]
        if topic not in known:
            unjudged.append(topic)
            continue
        answered.add(topic)
        extras = record.get("extras") or {}
        if extras.get(WORDS, 0) > MOST_WORDS:
            long.append(f"{topic} ({extras[WORDS]} words)")
        if extras.get(TWICE):
            twice.append(topic)
            sentences += extras[TWICE]
        if extras.get(REFUSED_2025):
            refused.append(f"{topic} ({extras[REFUSED_2025][0]})")
        yield index, record
    missing_ids = [topic for topic in judged if topic not in answered]
    if missing == "empty":
        for number, topic in enumerate(missing_ids, start=last):
            yield number, {"id": topic, "output": "", "docs": []}
    for note in notes(missing_ids, unjudged, long, (sentences, twice), missing, task):
        yield -1, note
    if refused:
        yield -1, f"{len(refused)} 2025 line(s) ragnarok's rag25_validation refuses (read here): {', '.join(refused)}"


def notes(
    missing_ids: list[str], unjudged: list[str], long: list[str], twice: tuple[int, list[str]], missing: str, task: str
) -> Iterator[str]:
    if missing_ids and missing == "empty":
        yield (
            f"{len(missing_ids)} judged topic(s) no submission line answers, scored as empty answers (castorini's "
            f"assign_nuggets.py): {', '.join(missing_ids)} (--task-arg {task}.missing_topics=failed fails them "
            "instead)"
        )
    if unjudged:
        yield (
            f"{len(unjudged)} submission line(s) of topics the qrels do not judge, not read (as castorini's "
            f"scripts): {', '.join(unjudged)}"
        )
    if long:
        yield long_answers_line(long)
    if twice[0]:
        yield (
            f"{twice[0]} answer sentence(s) citing one reference twice, which ragnarok's rag24_validation warns "
            f"of: {', '.join(twice[1])}"
        )


def long_answers_line(long: list[str]) -> str:
    """The line naming the answers over rag24_validation's limit (`long`: each "TOPIC (N words)")."""
    return f"{len(long)} answer(s) over {MOST_WORDS} words, which ragnarok's rag24_validation warns of (and cuts): " + (
        ", ".join(long)
    )

"""DRAGUN's Task 1 data in the resources repository's `data/` layout, read as auto_judge.py's
run_auto_question_evaluation reads it:

- `runs/question_generation_runs/RUN_TAG`: TSV run files (question_runs.py), of which the four organizer runs
  EXAMPLE_RUNS, with their human assessments, are AutoJudge's few-shot examples;
- `human_assessments/question_assessments.csv`: `topic_id, run_tag, run_question_rank, run_question_text,
  rubric_question_rank, annotation` (very-similar, similar, different, very-different), the assessors' judgment
  of a submitted question against a rubric question.

A topic's examples for one rubric question: every organizer question of the topic (the runs in file name order,
each file's lines in order) with the annotations the assessors gave it against that rubric question, "very-different"
where none (pandas' left merge: a question annotated twice is shown twice), for every rubric question rank the
assessments of the organizer runs name on that topic (auto_judge.py stops at a rank without any).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ragbench.api import ConfigError, RecordError
from ragbench.api.data import given_text

from .question_runs import tsv_rows

QUESTION_RUNS = Path("runs/question_generation_runs")
QUESTION_ASSESSMENTS = Path("human_assessments/question_assessments.csv")
EXAMPLE_RUNS = (  # auto_judge.question_organizer_runs
    "organizer-gpt-oss-t1",
    "dragun-organizers-starter-kit-task-1",
    "organizer-t1-perplex",
    "organizer-t1-chatgpt",
)
UNJUDGED = "very-different"  # auto_judge.py's fillna
COLUMNS = ("topic_id", "run_tag", "run_question_rank", "run_question_text", "rubric_question_rank", "annotation")


def organizer_questions(folder: Path) -> dict[str, list[tuple[str, int, str]]]:
    """topic -> its (run tag, rank, question) of the organizer runs, runs in file name order, lines in order."""
    out: dict[str, list[tuple[str, int, str]]] = {}
    for path in sorted(p for p in folder.iterdir() if p.name in EXAMPLE_RUNS):
        for _, row in tsv_rows(path):
            if not isinstance(row, RecordError):
                topic, rank, text = row
                out.setdefault(topic, []).append((path.name, rank, text))
    return out


def question_examples(runs: Path, assessments: Path) -> dict[str, dict[int, list[dict[str, str]]]]:
    """topic -> rubric question rank -> AutoJudge's examples, `{question: annotation}` each."""
    annotated: dict[str, dict[int, dict[tuple[str, int, str], list[str]]]] = {}
    text = given_text(assessments, "DRAGUN's question assessments (CSV)")
    for line, row in enumerate(csv.DictReader(io.StringIO(text, newline="")), start=2):
        try:
            if row["run_tag"] not in EXAMPLE_RUNS:
                continue
            key = (row["run_tag"], int(row["run_question_rank"]), row["run_question_text"])
            by_rank = annotated.setdefault(row["topic_id"], {}).setdefault(int(row["rubric_question_rank"]), {})
            by_rank.setdefault(key, []).append(row["annotation"])
        except (KeyError, ValueError, TypeError) as exc:
            raise ConfigError(
                f"{assessments}, line {line}: not DRAGUN's question assessments ({type(exc).__name__}: {exc}): "
                f"expected the columns {', '.join(COLUMNS)}, the ranks integers"
            ) from None
    asked = organizer_questions(runs)
    out: dict[str, dict[int, list[dict[str, str]]]] = {}
    for topic, ranks in annotated.items():
        out[topic] = {
            rank: [
                {question[2]: label} for question in asked.get(topic, []) for label in found.get(question, [UNJUDGED])
            ]
            for rank, found in sorted(ranks.items())
        }
    return out

"""DRAGUN's data as the resources repository (trec-dragun/resources 4b60fb6) lays it out under `data/`, read as its
auto_judge/auto_judge.py reads it:

- `trec-2025-dragun-topics.jsonl`: one news article a line, `{"url", "title", "headings", "body", "docid"}`, the
  docid the topic id;
- `human_rubrics/*.json`: `{"topic_id", "rubrics": [{"question_id", "question_text", "importance",
  "short_answers": [{"answer_id", "answer_text", "references"}]}]}` (files in name order, a topic given twice:
  the later file). The released scripts read question_id (its number after the last "-"), importance
  (IMPORTANCE), answer_id and references; the answer's text field is not named by any released file (the
  rubrics are on the NIST TREC browser): ragbench's sample calls it `answer_text`, and the judge is shown
  every field as the file has it, whatever its name;
- `human_assessments/report_assessments.csv`: `topic_id, run_tag, answer_id, annotation`;
- `runs/report_generation_runs/RUN_TAG`: a run's reports (submission.py), of which the two organizer runs
  EXAMPLE_RUNS, with their human assessments, are AutoJudge's few-shot examples on every topic.
"""

from __future__ import annotations

import copy
import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, RecordError
from ragbench.api.data import (
    JsonObject,
    NotUtf8,
    built_records,
    given_bytes,
    given_jsonl,
    given_text,
    given_values,
    parse_json,
    require,
    utf8,
)

from ..shared.given_data import all_found
from .question_data import EXAMPLE_RUNS as QUESTION_EXAMPLE_RUNS
from .question_data import QUESTION_ASSESSMENTS, QUESTION_RUNS

TOPICS = Path("trec-2025-dragun-topics.jsonl")
RUBRICS = Path("human_rubrics")
ASSESSMENTS = Path("human_assessments/report_assessments.csv")
RUNS = Path("runs/report_generation_runs")
EXAMPLE_RUNS = ("organizer-gpt-oss-t2", "dragun-organizers-starter-kit-task-2")  # auto_judge.report_organizer_runs
IMPORTANCE = ("A: Have to Know", "B: Good to Know", "C: Nice to Know")  # the labels score.py weighs
TRAILING_NUMBER = re.compile(r"(\d+)$")
ASSESSMENT_ORDERS = ("upstream", "file_order")  # of the few-shot assessments whose ids share a trailing number


@dataclass(frozen=True)
class Topic:
    id: str
    article: JsonObject  # the topics file's line, as the judge is shown it
    line: int  # in the topics file, 1-based


def the_one_run(folder: Path, organizer_runs: tuple[str, ...], task: str) -> Path:
    """The folder's one run file, any name but the organizer runs' (`ragbench score --predictions FOLDER`); a FIFO
    or device there counts as one, refused by its reader (never waited on), a folder does not."""
    runs = sorted(
        p for p in folder.iterdir() if not p.is_dir() and p.name not in organizer_runs and not p.name.startswith(".")
    )
    if len(runs) != 1:
        found = ", ".join(p.name for p in runs) or "none"
        raise ConfigError(
            f"--predictions {folder}: expected one DRAGUN {task} run file (besides the organizer runs), found "
            f"{found}: give a folder holding one run"
        )
    return runs[0]


def files(folder: Path, task: str = "report") -> dict[str, Path]:
    """The data folder's topics, rubrics, assessments and runs of Task 2 (task "report") or Task 1 ("question"); a
    missing one is a ConfigError naming it."""
    assessments, runs, examples = (
        (QUESTION_ASSESSMENTS, QUESTION_RUNS, QUESTION_EXAMPLE_RUNS)
        if task == "question"
        else (ASSESSMENTS, RUNS, EXAMPLE_RUNS)
    )
    found = {"topics": folder / TOPICS, "rubrics": folder / RUBRICS, "assessments": folder / assessments}
    return all_found(
        {**found, "runs": folder / runs},
        lambda what, path: (
            f"DRAGUN's {what} {path} not found: --data names the resources repository's data/ folder "
            f"(with {TOPICS}, {RUBRICS}/, {assessments} and {runs}/ holding the organizer runs {', '.join(examples)})"
        ),
    )


def read_topics(path: Path) -> Iterator[Topic | RecordError]:
    def topic(record: JsonObject, index: int) -> Topic:
        return Topic(require(record, "docid", path, index, str), record, index + 1)

    return built_records(given_jsonl(path, "DRAGUN's topics (JSONL)"), topic)


def read_rubrics(folder: Path) -> tuple[dict[str, list[Any]], list[RecordError]]:
    """topic id -> its rubric questions, each answer's references left out (auto_judge strips them), and the files
    that are no rubric (a question whose importance is none of IMPORTANCE, or whose id ends in no number)."""
    rubrics: dict[str, list[Any]] = {}
    bad: list[RecordError] = []
    for path in sorted(folder.glob("*.json")):
        given = given_bytes(path, "a DRAGUN rubric (JSON)")
        try:
            data = parse_json(utf8(given))
            topic, questions = data["topic_id"], copy.deepcopy(data["rubrics"])
            for question in questions:
                if (
                    question["importance"] not in IMPORTANCE
                    or not str(question["question_id"]).split("-")[-1].isdigit()
                ):
                    raise ValueError(f"question {question['question_id']!r}: importance {question['importance']!r}")
                for answer in question["short_answers"]:
                    if "answer_id" not in answer:
                        raise KeyError("answer_id")
                    answer.pop("references", None)
        except NotUtf8 as exc:
            bad.append(RecordError(str(path), exc.line, str(exc)))
            continue
        except (ValueError, KeyError, TypeError) as exc:  # NestedTooDeep among the ValueErrors
            bad.append(RecordError(str(path), 1, f"not a DRAGUN rubric ({type(exc).__name__}: {exc})"))
            continue
        rubrics[str(topic)] = questions
    return rubrics, bad


def read_assessments(path: Path, order: str = "upstream") -> dict[tuple[str, str], dict[str, str]]:
    """(topic, run tag) -> {answer_id: annotation}, in the order of the answer id's trailing number, as
    auto_judge.py builds its few-shot examples (a later row of one answer overwriting an earlier one). `order`
    (ASSESSMENT_ORDERS) says where two ids share a trailing number: "upstream", as auto_judge.py's pandas sort
    leaves them (`upstream_order`), or "file_order", in the file's order."""
    rows: dict[tuple[str, str], list[dict[str, str]]] = {}
    for row in csv.DictReader(io.StringIO(given_text(path, "DRAGUN's report assessments (CSV)"), newline="")):
        rows.setdefault((row["topic_id"], row["run_tag"]), []).append(row)
    out: dict[tuple[str, str], dict[str, str]] = {}
    for key, found in rows.items():
        ordered = upstream_order(found) if order == "upstream" else sorted(found, key=trailing_number)
        out[key] = {row["answer_id"]: row["annotation"] for row in ordered}
    return out


def trailing_number(row: dict[str, str]) -> int:
    return int(TRAILING_NUMBER.search(row["answer_id"])[1])  # type: ignore[index]


def upstream_order(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """`rows` (one topic's and run's, in file order) as auto_judge.py orders them: pandas' `sort_values` of the
    frame by the answer id's trailing number, with its default kind (quicksort: not stable), the same call on a
    frame of the same rows. Where two ids share a trailing number, their order is what numpy's sort kernel for
    int64 gives on this machine (its SIMD kernels leave ties otherwise than its portable one)."""
    pandas = dragun_pandas()
    frame = pandas.DataFrame(rows, columns=["topic_id", "run_tag", "answer_id", "annotation"])
    ordered = frame.sort_values(by="answer_id", key=lambda ids: ids.str.extract(r"(\d+)$")[0].astype(int))
    return [rows[position] for position in ordered.index]


def dragun_pandas() -> Any:
    """pandas, which auto_judge.py sorts the human assessments with (the `dragun` extra)."""
    try:
        import pandas
    except ImportError:
        raise ConfigError(
            "DRAGUN's few-shot assessments are ordered as auto_judge.py orders them, with pandas: run "
            "`pip install 'ragbench[dragun]'` (or give --task-arg dragun_report.assessment_order=file_order)"
        ) from None
    return pandas


def first_reports(path: Path) -> dict[str, str]:
    """topic -> the run's first report of it, its sentences' texts joined by spaces (auto_judge's report text)."""
    reports: dict[str, str] = {}
    for index, data in given_values(path, "an organizer run's reports (JSONL)"):
        try:
            if isinstance(data, RecordError):
                raise data
            reports.setdefault(data["metadata"]["topic_id"], " ".join(s["text"] for s in data["responses"]))
        except (KeyError, TypeError, RecordError) as exc:
            raise ConfigError(
                f"{path}:{index + 1}: not an organizer run's report ({exc}); give the run file as the resources "
                "repository holds it"
            ) from None
    return reports


def few_shot_examples(found: dict[str, Path], order: str = "upstream") -> dict[str, list[dict[str, Any]]]:
    """topic -> AutoJudge's two example reports with their human assessments (in `order`: read_assessments), for
    every topic the assessments name whose example runs both report on it (auto_judge.py fails on any other)."""
    assessed = read_assessments(found["assessments"], order)
    reports = {tag: first_reports(found["runs"] / tag) for tag in EXAMPLE_RUNS if (found["runs"] / tag).is_file()}
    out: dict[str, list[dict[str, Any]]] = {}
    for topic in sorted({topic for topic, _ in assessed}):
        if all(topic in reports.get(tag, {}) for tag in EXAMPLE_RUNS):
            out[topic] = [
                {"report": reports[tag][topic], "assessments": assessed.get((topic, tag), {})} for tag in EXAMPLE_RUNS
            ]
    return out

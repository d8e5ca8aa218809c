"""FlashRAG's JSONL records that its own Item and evaluator cannot read (upstream stops with a traceback on
each) end as one counted bad record each, never as a score against a made-up gold: a record whose
`golden_answers` are choice indexes with no list of `choices` to index (scored before against the text "1"),
and `choices` that are not a list (a string or a mapping)."""

from __future__ import annotations

import json

import pytest

from ragbench.api import RecordError
from ragbench.tasks.open_qa.formats import flashrag_records

QUESTION = {"id": "test_0", "question": "Who founded the fishing town of Olm?", "metadata": {}}


def read(tmp_path, **fields):
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps({**QUESTION, **fields}) + "\n", encoding="utf-8")
    [(_, record)] = list(flashrag_records(path))
    return record


@pytest.mark.parametrize(
    "fields, problem",
    [
        ({"golden_answers": [1]}, "holds an integer, not an answer text"),
        ({"golden_answers": [1], "choices": []}, "holds an integer, not an answer text"),
        ({"golden_answers": [1], "choices": None}, "holds an integer, not an answer text"),
        ({"golden_answers": 1}, "holds an integer, not an answer text"),
        ({"golden_answers": ["Ansgar Pell", 2.5]}, "holds a number, not an answer text"),
        ({"golden_answers": [1], "choices": "Trask, Ansgar Pell"}, "expected a list of choice texts, got a string"),
        (
            {"golden_answers": [1], "choices": {"A": "Trask", "B": "Ansgar Pell"}},
            "expected a list of choice texts, got a mapping",
        ),
    ],
    ids=[
        "no-choices",
        "empty-choices",
        "null-choices",
        "bare-index",
        "number-gold",
        "choices-string",
        "choices-mapping",
    ],
)
def test_a_record_flashrag_cannot_read_is_one_bad_record(tmp_path, fields, problem):
    record = read(tmp_path, **fields)
    assert isinstance(record, RecordError) and problem in str(record)


@pytest.mark.parametrize(
    "fields, golds",
    [
        ({"golden_answers": ["Ansgar Pell"], "choices": []}, ["Ansgar Pell"]),
        ({"golden_answers": ["Ansgar Pell"], "choices": None}, ["Ansgar Pell"]),
        ({"golden_answers": "Ansgar Pell"}, "Ansgar Pell"),  # FlashRAG's em, acc and f1 take a string as one answer
        ({"golden_answers": [1], "choices": ["Trask", "Ansgar Pell"]}, ["Ansgar Pell"]),
        ({"golden_answers": [-1], "choices": ["Trask", "Ansgar Pell"]}, ["Ansgar Pell"]),  # Python's index, as upstream
    ],
    ids=["empty-choices", "null-choices", "string-gold", "index", "negative-index"],
)
def test_answer_texts_and_indexes_into_choices_are_read(tmp_path, fields, golds):
    assert read(tmp_path, **fields)["golden_answers"] == golds


def test_a_run_counts_the_unreadable_record_and_scores_the_rest(tmp_path):
    """mmlu_flashrag on a right record and one whose choices are missing: 1 scored (em 1), 1 bad record (it
    was scored 0 against the gold text "1")."""
    from support.helpers import run

    path = tmp_path / "flashrag_mmlu_test.jsonl"
    records = [{"golden_answers": [1], "choices": ["Trask", "Ansgar Pell"]}, {"golden_answers": [1]}]
    path.write_text(
        "".join(json.dumps({**QUESTION, "id": f"test_{i}", **fields}) + "\n" for i, fields in enumerate(records)),
        encoding="utf-8",
    )
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"pattern": "Olm", "response": "Ansgar Pell"}]), encoding="utf-8")
    results = run(
        tmp_path,
        tasks=["mmlu_flashrag"],
        data={"mmlu_flashrag": str(path)},
        system="closed_book",
        model=f"scripted:{rules}",
    )
    counts = results["counts"]["mmlu_flashrag"]
    assert (counts["records"], counts["scored"], counts["bad_records"]) == (2, 1, 1)
    assert results["results"]["mmlu_flashrag"]["em"] == 1.0

"""Which text CRAG-MM judges, and how `ragbench score` reads upstream's file of turns besides evaluate mode's way
(test_crag_mm_evaluate_parity.py): a run's answer is cut by the task's post-processing, its sample keeps the judged
text and the uncut output; over a hub copy (the variant of the release before) the file's answers are cut and the
sessions of SESSIONS_TO_SKIP left out, each said in a note, never called ids not in the data; a turn file's bad lines
are bad records naming the field; a turn file is scored, not run."""

from __future__ import annotations

import json

import pytest

from conftest import write_jsonl
from ragbench.api import Prediction
from ragbench.tasks.crag_mm.cut import truncate_response
from ragbench.tasks.crag_mm.metrics import EVALUATE_MODE, judged_text
from ragbench.tasks.crag_mm.records import SESSIONS_TO_SKIP
from ragbench.tasks.crag_mm.synthetic import write_dataset
from ragbench.tasks.crag_mm.task import CragMMSingle
from ragbench.testing import ScriptedLLM, run_eval
from support.crag_mm_helpers import png, tokenizer_dir

SKIPPED = sorted(SESSIONS_TO_SKIP)[0]
LONG = "This is the Brandenburg Gate in Berlin, built between 1788 and 1791, though I don't know who designed it."


def hub_copy(tmp_path):
    rows = []
    for session, query, gold in (("ego-1", "what gate is this?", "The Brandenburg Gate."), (SKIPPED, "a?", "b")):
        turns = [{"interaction_id": f"{session}-0", "domain": 0, "query_category": 0, "dynamism": 0, "query": query}]
        rows.append(
            {
                "session_id": session,
                "image": {"bytes": png((9, 9, 9)), "path": None},
                "image_url": None,
                "turns": [turns[0] | {"image_quality": 0}],
                "answers": [{"interaction_id": f"{session}-0", "ans_full": gold}],
            }
        )
    return write_dataset(tmp_path / "data", rows)


def turn(session: str, answer: str, **fields) -> dict:
    line = {
        "session_id": session,
        "interaction_id": f"{session}-0",
        "turn_idx": 0,
        "is_ego": True,
        "query": "what gate is this?",
        "ground_truth": "The Brandenburg Gate.",
        "agent_response": answer,
    }
    return line | fields


def test_a_runs_sample_keeps_the_judged_text_and_the_uncut_output(tmp_path):
    judge = ScriptedLLM("Result: CORRECT")
    run = run_eval(
        "crag_mm_single",
        "closed_book",
        ScriptedLLM(LONG),
        data=hub_copy(tmp_path),
        judges=[judge],
        task_args={"tokenizer": tokenizer_dir()},
        output=tmp_path / "run",
    )
    cut = truncate_response(LONG, tokenizer_dir())
    [record] = [r for r in run.samples["crag_mm_single"] if r.id == "ego-1-0"]
    assert (record.answer, record.raw_output) == (cut, LONG)
    assert record.scores["missing"] == 0.0  # its "I don't know" is after the 74th token
    assert [r.messages[1][1].split("\nPrediction: ")[1] for r in judge.requests] == [
        f"{cut}\nGive your output below:\n"
    ]


def test_the_judged_text_is_cut_once():
    folder = tokenizer_dir()
    cut = truncate_response(LONG, folder)
    assert judged_text(Prediction("x", answer=cut, raw_output=LONG), folder) == cut  # the task's post-processing
    assert judged_text(Prediction("x", answer=LONG), folder) == cut  # a system that returns the model's text
    assert judged_text(Prediction("x", answer=LONG, raw_output="Answer: " + LONG), folder) == cut


def test_over_a_hub_copy_the_files_answers_are_cut_and_skipped_sessions_noted(tmp_path):
    folder = tmp_path / "results" / "2025-06-01_10-00-00"
    folder.mkdir(parents=True)
    write_jsonl(folder / "response.jsonl", [turn("ego-1", LONG), turn(SKIPPED, "b")])
    judge = ScriptedLLM("Result: CORRECT")
    run = run_eval(
        "crag_mm_single",
        "recorded",
        data=hub_copy(tmp_path),
        judges=[judge],
        system_args={"path": str(tmp_path / "results")},
        task_args={"tokenizer": tokenizer_dir()},
        output=tmp_path / "run",
    )
    assert [r.id for r in run.samples["crag_mm_single"]] == ["ego-1-0"]
    report = json.loads((tmp_path / "run" / "results.json").read_text())["system_reports"]["crag_mm_single"]
    assert report["errors"] == []
    [note] = report["notes"]
    assert f"session {SKIPPED} are not scored: it is one of upstream's SESSIONS_TO_SKIP" in note
    assert "pass the file itself as --data" in note
    cut = truncate_response(LONG, tokenizer_dir())
    assert judge.requests[0].messages[1][1].endswith(f"Prediction: {cut}\nGive your output below:\n")


def test_a_turn_files_bad_lines_are_bad_records_naming_the_field(tmp_path):
    path = write_jsonl(
        tmp_path / "turns.jsonl",
        [
            turn("a", "x"),
            {k: v for k, v in turn("b", "x").items() if k != "turn_idx"},
            turn("c", "x", is_ego="yes"),
            turn("d", 3),
            turn("a", "y"),
        ],
    )
    found = list(CragMMSingle(data_path=path).examples())
    assert [type(e).__name__ for e in found] == ["Example", *["RecordError"] * 4]
    assert "field 'turn_idx'" in str(found[1]) and "field 'is_ego'" in str(found[2])
    assert "field 'agent_response'" in str(found[3]) and "a second line of interaction 'a-0'" in str(found[4])
    assert found[0].gold == {"answers": ["The Brandenburg Gate."]} and found[0].meta["image_source"] == "ego"


def test_a_turn_file_needs_no_tokenizer_and_is_scored_not_run(tmp_path, monkeypatch):
    monkeypatch.delenv("CRAG_MM_LLAMA32_TOKENIZER", raising=False)
    path = write_jsonl(tmp_path / "turns.jsonl", [turn("a", LONG)])
    run = run_eval(
        "crag_mm_single", "recorded", data=path, judges=[ScriptedLLM("Result: WRONG")], system_args={"path": str(path)}
    )
    [record] = run.samples["crag_mm_single"]
    assert record.answer == LONG and record.extras[EVALUATE_MODE] is True and record.scores["missing"] == 1.0
    with pytest.raises(Exception, match="no picture: a file of turns"):
        CragMMSingle(data_path=path).prompting.build_prompt(next(CragMMSingle(data_path=path).examples()))

"""The `frames` task reads FRAMES's released test.tsv (google/frames-benchmark; tests/data/frames/test.tsv: made-up
questions in its exact layout) and the earlier test_old.tsv, whose first column is pandas' unnamed index; it is
scored by the FRAMES paper's auto-rater (llm_judge preset frames; the matrix runs every system on it)."""

from __future__ import annotations

import json

from conftest import TEST_DATA
from ragbench.testing import installed_registry
from support.helpers import run, samples

SAMPLE = TEST_DATA / "frames" / "test.tsv"


def examples(path) -> list:
    return list(installed_registry().load("tasks", "frames")(str(path)).examples())


def test_the_released_tsv_reads_prompts_answers_and_reasoning_types():
    first, second, third = examples(SAMPLE)
    assert (first.question, first.gold) == (
        "Who founded the fishing town on the north coast of the island whose capital is Evermouth?",
        {"answers": ["Ansgar Pell"]},
    )
    assert second.meta["reasoning_types"] == "Multiple constraints | Temporal reasoning"
    assert third.question == 'How many years after the founding of Evermouth was the town of "Olm" founded?'
    assert (
        third.meta["wiki_links"] == "['https://en.wikipedia.org/wiki/Evermouth', 'https://en.wikipedia.org/wiki/Olm']"
    )
    assert [e.docs for e in (first, second, third)] == [[], [], []]  # open domain: a Wikipedia corpus is searched


def test_the_earlier_release_with_its_index_column_reads_the_same_examples(tmp_path):
    header, *rows = SAMPLE.read_text(encoding="utf-8").splitlines()
    old = tmp_path / "test_old.tsv"
    old.write_text("\n".join(["\t" + header, *(f"{i}\t{row}" for i, row in enumerate(rows))]) + "\n", encoding="utf-8")
    assert examples(old) == examples(SAMPLE)


def test_the_auto_rater_scores_a_run_and_a_reply_without_decision_is_counted(tmp_path):
    model, judge = tmp_path / "model.json", tmp_path / "judge.json"
    model.write_text(json.dumps([{"pattern": "Evermouth\\?", "response": "Ansgar Pell"}, {"response": "Olm"}]))
    judge.write_text(
        json.dumps(
            [
                {"pattern": "Predicted Answer: Ansgar Pell\n", "response": "Explanation: not false.\nDecision: TRUE"},
                {"pattern": "Question: In which village", "response": "Explanation: Olm is a town, not Trask."},
                {"response": "Explanation: Olm is not the ground truth.\nDecision: FALSE"},
            ]
        )
    )
    results = run(
        tmp_path,
        tasks=["frames"],
        data={"frames": str(SAMPLE)},
        system="closed_book",
        model=f"scripted:{model}",
        judges=[f"scripted:{judge}"],
    )
    values = results["results"]["frames"]
    assert values["llm_judge"] == 0.5  # TRUE, then FALSE; the reply without a decision is not scored
    assert values["llm_judge_unparsed"] == 1  # a count over the examples
    judged = samples(tmp_path / "run", "frames")[0]["judge_trace"][0]
    assert judged["request"]["messages"][0]["content"].startswith("===Task===\nI need your help")

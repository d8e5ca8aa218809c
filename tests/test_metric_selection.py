"""Metrics chosen per run (--metrics NAME / +NAME), the fit check, and the general LLM judge."""
from __future__ import annotations

import json

import pytest
from helpers import cli, run, samples
from test_engine_openai import FakeServer

from ragbench.errors import ConfigError
from ragbench.metrics.judge import LlmJudge, reference_text
from ragbench.planning import metric_names


def test_metrics_replace_or_add_to_the_tasks_own():
    own = ("match", "em")
    assert metric_names(own, []) == ["match", "em"]
    assert metric_names(own, ["f1"]) == ["f1"]
    assert metric_names(own, ["+f1", "+match"]) == ["match", "em", "f1"]
    assert metric_names(own, ["f1", "+llm_judge"]) == ["f1", "llm_judge"]


def test_a_run_uses_the_chosen_metrics(tmp_path):
    results = run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo", limit=2, metrics=["+length"])
    assert set(results["results"]["demo"]) == {"match", "match_normalized", "em", "f1", "length"}
    only = run(tmp_path, name="b", tasks=["demo"], system="closed_book", model="scripted:echo", limit=2, metrics=["em"])
    assert set(only["results"]["demo"]) == {"em"}


def test_a_metric_that_cannot_score_the_task_is_refused_before_the_run(tmp_path):
    with pytest.raises(ConfigError, match="metric choice_accuracy cannot score task demo: it needs choices gold"):
        run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo", metrics=["+choice_accuracy"])
    assert not (tmp_path / "run").exists()


def test_list_metrics_says_which_tasks_each_fits():
    listed = cli("list", "metrics").stdout
    assert "fits: arc_challenge\n" in listed  # choice_accuracy
    assert "fits: alce_asqa, asqa\n" in listed  # str_em


# --- llm_judge ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("options,reply,expected", [
    ({}, "Correct.", 1.0), ({}, "incorrect", 0.0), ({}, "The answer is correct, not incorrect", 1.0),
    ({}, "no idea", None),
    ({"preset": "faithfulness"}, "4", 0.75), ({"preset": "faithfulness"}, "Score: 9", None),
    ({"preset": "rubric"}, 'Sure: {"reason": "ok", "score": 7}', 0.7), ({"preset": "rubric"}, '{"score": "x"}', None),
    ({"preset": "rubric"}, "7/10", None),
    ({"labels": "yes:1,partly:0.5,no:0"}, "Partly.", 0.5),
    ({"json_field": "grade", "score_range": "0-4"}, '```json\n{"grade": 2}\n```', 0.5),
])
def test_judge_replies_parse_as_labels_ranges_or_json(options, reply, expected):
    assert LlmJudge(**options).parse(reply) == expected


def test_judge_options_are_checked():
    with pytest.raises(ConfigError, match="preset 'nope'"):
        LlmJudge(preset="nope")
    with pytest.raises(ConfigError, match="score_range 'a-b'"):
        LlmJudge(score_range="a-b")


def test_reference_text_covers_every_kind_of_gold():
    assert reference_text({"answers": ["Paris", "paris"]}) == "Paris | paris"
    assert reference_text({"qa_pairs": [{"short_answers": ["a", "b"]}, {"short_answers": ["c"]}]}) == "a; b | c"
    assert reference_text({"answer": "x", "alt_ans": ["y"]}) == "x | y"


def judge_rules(tmp_path, name, verdict):
    path = tmp_path / name
    path.write_text(json.dumps([{"pattern": "You are grading", "response": verdict}, {"response": "unused"}]))
    return f"scripted:{path}"


def test_two_judges_are_averaged_and_unparsed_replies_counted(tmp_path):
    judges = [judge_rules(tmp_path, "a.json", "correct"), judge_rules(tmp_path, "b.json", "I cannot tell")]
    results = run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo", limit=3,
                  metrics=["+llm_judge"], judges=judges)
    assert results["results"]["demo"]["llm_judge"] == 1.0  # the parsed judge only, not averaged with a 0
    assert results["results"]["demo"]["llm_judge_unparsed"] == 3.0
    sample = samples(tmp_path / "run", "demo")[0]
    assert [step["name"] for step in sample["judge_trace"]] == ["judge:llm_judge"] * 2


def test_each_judge_has_its_own_engine_options_and_the_run_replays_offline(tmp_path):
    first, second = FakeServer(), FakeServer()
    try:
        results = run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo",
                      metrics=["llm_judge"], judges=["openai:judge-a", "openai:judge-b"],
                      judge_args={"0": {"base_url": first.base_url}, "1": {"base_url": second.base_url}})
    finally:
        first.stop()
        second.stop()
    assert len(first.requests) == len(second.requests) == 24  # two judges on two servers
    assert {r["body"]["model"] for r in first.requests} == {"judge-a"}
    assert results["results"]["demo"]["llm_judge"] is not None  # the fake servers echo the prompt back
    calls = tmp_path / "run" / "calls" / "llm.jsonl"
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps({"id": s["id"], "output": s["output"]}) + "\n"
                                   for s in samples(tmp_path / "run", "demo")))
    replayed = cli("score", "--task", "demo", "--predictions", str(predictions), "--metrics", "llm_judge",
                   "--judge", f"replay:{calls}", "--judge", f"replay:{calls}", "--judge-arg", "0.role=judge:0",
                   "--judge-arg", "1.role=judge:1", "--output", str(tmp_path / "again"), "--no-progress")
    assert replayed.returncode == 0, replayed.stderr
    again = json.loads((tmp_path / "again" / "results.json").read_text())
    assert again["results"]["demo"] == results["results"]["demo"]


def test_judge_arg_must_name_a_judge(tmp_path):
    result = cli("--tasks", "demo", "--judge", "scripted:echo", "--judge-arg", "3.base_url=x")
    assert result.returncode == 2 and "N the position of a --judge (0 to 0)" in result.stderr

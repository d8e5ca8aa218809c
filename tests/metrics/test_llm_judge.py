"""The general LLM-judge metric `llm_judge`: presets and template files, parsers, several judges
averaged with their own engine options, unparsed replies counted, replay of the judges' exchanges."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from test_crag_task import EMBEDDER
from test_engine_openai import FakeServer

from conftest import write_jsonl
from ragbench.api import ConfigError
from ragbench.metrics.judge import PRESETS, LlmJudge
from ragbench.testing import run_eval
from support import scoring_plugin
from support.crag_helpers import crag_record, tokenizer_dir
from support.helpers import cli_here, run, samples


@pytest.mark.parametrize(
    "options,reply,expected",
    [
        ({}, "Correct.", 1.0),
        ({}, "incorrect", 0.0),
        ({}, "The answer is correct, not incorrect", 1.0),
        ({}, "no idea", None),
        ({"preset": "faithfulness"}, "4", 0.75),
        ({"preset": "faithfulness"}, "Score: 9", None),
        ({"preset": "rubric"}, 'Sure: {"reason": "ok", "score": 7}', 0.7),
        ({"preset": "rubric"}, '{"score": "x"}', None),
        ({"preset": "rubric"}, "7/10", None),
        ({"preset": "rubric"}, '{"score": 8, "parts": {"a": 1}} done', 0.8),
        ({"preset": "rubric"}, '{"note": {"score": 3}} {"score": 6}', 0.6),
        ({"preset": "rubric"}, '{"score": 11}', None),
        ({"labels": "yes:1,partly:0.5,no:0"}, "Partly.", 0.5),
        ({"json_field": "grade", "score_range": "0-4"}, '```json\n{"grade": 2}\n```', 0.5),
        # FRAMES's auto-rater: the decision after the explanation decides, whatever words the explanation uses
        ({"preset": "frames"}, "Explanation: it is not false that he founded it.\nDecision: TRUE", 1.0),
        ({"preset": "frames"}, 'Explanation: true in part.\n"Decision:" ("FALSE")', 0.0),
        ({"preset": "frames"}, "Decision:\nDecision: FALSE", 0.0),
        ({"preset": "frames"}, "TRUE", None),
        ({"preset": "frames", "after": ""}, "TRUE", 1.0),
        ({"labels": "yes:1,no:0", "after": "verdict:"}, "yes, mostly. Verdict: no", 0.0),
    ],
)
def test_judge_replies_parse_as_labels_ranges_or_json(options, reply, expected):
    assert LlmJudge(**options).parse(reply) == expected


def test_judge_options_are_checked():
    with pytest.raises(ConfigError, match="preset 'nope'"):
        LlmJudge(preset="nope")
    with pytest.raises(ConfigError, match="score_range 'a-b'"):
        LlmJudge(score_range="a-b")
    for bad in ("correct:1,incorrect:x", "correct", ":1"):
        with pytest.raises(ConfigError, match=f"labels '{bad}' is not NAME:VALUE"):
            LlmJudge(labels=bad)


def predictions_of(run_dir: Path, task: str, path: Path) -> Path:
    """The run's outputs for `task` as a predictions file (`id`, `output` a line) for `ragbench score`."""
    return write_jsonl(path, [{"id": s["id"], "output": s["output"]} for s in samples(run_dir, task)])


def score_with_judges(
    predictions: Path, run_dir: Path, judge_files: list[str], out: Path
) -> subprocess.CompletedProcess:
    """`ragbench score` of the demo task's `predictions` with `llm_judge`, replaying judge files of `run_dir`."""
    judges = [option for name in judge_files for option in ("--judge", f"replay:{run_dir / name}")]
    return cli_here(
        "score",
        "--task",
        "demo",
        "--predictions",
        str(predictions),
        "--metrics",
        "llm_judge",
        *judges,
        "--output",
        str(out),
        "--no-progress",
    )


def judged_demo_run(tmp_path: Path, judges: list[str], metrics: tuple[str, ...] = ("llm_judge",), **config) -> dict:
    """A closed-book run of the demo task on the echoing scripted model, scored by `llm_judge` with `judges`."""
    return run(
        tmp_path,
        tasks=["demo"],
        system="closed_book",
        model="scripted:echo",
        metrics=list(metrics),
        judges=judges,
        **config,
    )


def judge_rules(tmp_path, name, verdict):
    path = tmp_path / name
    path.write_text(json.dumps([{"pattern": "You are grading", "response": verdict}, {"response": "unused"}]))
    return f"scripted:{path}"


def test_two_judges_are_averaged_and_unparsed_replies_counted(tmp_path):
    judges = [judge_rules(tmp_path, "a.json", "correct"), judge_rules(tmp_path, "b.json", "I cannot tell")]
    results = judged_demo_run(tmp_path, judges, limit=3, metrics=("+llm_judge",))
    assert results["results"]["demo"]["llm_judge"] == 1.0  # the parsed judge only, not averaged with a 0
    assert results["results"]["demo"]["llm_judge_unparsed"] == 3.0
    sample = samples(tmp_path / "run", "demo")[0]
    assert [step["name"] for step in sample["judge_trace"]] == ["judge:llm_judge"] * 2


def test_each_judge_has_its_own_engine_options_and_the_run_replays_offline(tmp_path):
    first, second = FakeServer(), FakeServer()
    try:
        results = judged_demo_run(
            tmp_path,
            ["openai:judge-a", "openai:judge-b"],
            judge_args={"0": {"base_url": first.base_url}, "1": {"base_url": second.base_url}},
        )
    finally:
        first.stop()
        second.stop()
    assert len(first.requests) == len(second.requests) == 24  # two judges on two servers
    assert {r["body"]["model"] for r in first.requests} == {"judge-a"}
    assert results["results"]["demo"]["llm_judge"] is not None  # the fake servers echo the prompt back
    predictions = predictions_of(tmp_path / "run", "demo", tmp_path / "p.jsonl")
    replayed = score_with_judges(
        predictions, tmp_path / "run", ["judge0_calls.jsonl", "judge1_calls.jsonl"], tmp_path / "again"
    )
    assert replayed.returncode == 0, replayed.stderr
    again = json.loads((tmp_path / "again" / "results.json").read_text())
    assert again["results"]["demo"] == results["results"]["demo"]


def test_judge_arg_must_name_a_judge(tmp_path):
    result = cli_here("--tasks", "demo", "--judge", "scripted:echo", "--judge-arg", "3.base_url=x")
    assert result.returncode == 2 and "N the position of a --judge (0 to 0)" in result.stderr


def test_the_frames_preset_asks_the_papers_auto_rater_question_and_reads_enough_tokens_for_its_explanation():
    judge = LlmJudge(preset="frames")
    prompt = judge.template.format(question="Q?", answer="A", reference="G", documents="")
    assert prompt.startswith("===Task===\nI need your help in evaluating an answer provided by an LLM against a ground")
    assert (
        "\n===Input Data===\n- Question: Q?\n- Predicted Answer: A\n- Ground Truth Answer: G\n===Output Format===\n"
        in prompt
    )
    assert prompt.endswith('"Decision:" ("TRUE" or "FALSE" )\nPlease proceed with the evaluation.')
    assert judge.sampling == {"max_tokens": 1024, "temperature": 0.0}


def test_presets_are_data_files_whose_templates_fill_every_field():
    assert set(PRESETS) == {"correctness", "faithfulness", "rubric", "frames"}
    for name, preset in PRESETS.items():
        judge = LlmJudge(preset=name)
        assert judge.template == preset["template"] and not judge.template.endswith("\n")
        filled = judge.template.format(question="Q?", answer="A", reference="R", documents="D")
        assert "{" not in filled.replace('{"reason"', "")
    assert "{documents}" in PRESETS["faithfulness"]["template"]
    assert "{reference}" in PRESETS["correctness"]["template"]


def test_a_template_file_with_its_own_labels_scores_a_run(tmp_path):
    template = tmp_path / "judge.txt"
    template.write_text("Rate this answer. Q: {question} A: {answer} Gold: {reference}\nSay good, meh or bad.\n")
    rules = tmp_path / "judge.json"
    rules.write_text(json.dumps([{"pattern": "Rate this answer", "response": "Meh, I'd say."}]))
    results = judged_demo_run(
        tmp_path,
        [f"scripted:{rules}"],
        limit=2,
        metric_args={"llm_judge.prompt": str(template), "llm_judge.labels": "good:1,meh:0.5,bad:0"},
    )
    assert results["results"]["demo"]["llm_judge"] == 0.5
    sample = samples(tmp_path / "run", "demo")[0]
    sent = sample["judge_trace"][0]["request"]["messages"][0]["content"]
    assert sent.startswith("Rate this answer. Q: ") and sent.endswith("Say good, meh or bad.")


def test_a_template_with_an_unknown_field_is_a_configuration_error(tmp_path):
    template = tmp_path / "bad.txt"
    template.write_text("Judge {answer} against {gold}")
    with pytest.raises(ConfigError, match="unknown or bad field"):
        LlmJudge(prompt=str(template))
    with pytest.raises(ConfigError, match="prompt .*missing.txt"):
        LlmJudge(prompt=str(tmp_path / "missing.txt"))


def test_overwriting_a_run_removes_its_earlier_judge_files(tmp_path):
    judges = [judge_rules(tmp_path, "a.json", "correct"), judge_rules(tmp_path, "b.json", "incorrect")]
    judged_demo_run(tmp_path, judges, limit=1)
    judged_demo_run(tmp_path, judges[:1], limit=1, overwrite=True)
    assert sorted(p.name for p in (tmp_path / "run").glob("judge*")) == ["judge0_calls.jsonl"]
    assert len((tmp_path / "run" / "judge0_calls.jsonl").read_text().splitlines()) == 1


def test_a_failed_judge_call_is_counted_and_replayed_as_a_failure(tmp_path):
    nothing = tmp_path / "empty.jsonl"
    nothing.write_text(json.dumps({"prompt": "never asked", "response": "correct"}) + "\n")
    judges = [judge_rules(tmp_path, "a.json", "correct"), f"replay:{nothing}"]  # the second judge fails every call
    results = judged_demo_run(tmp_path, judges, limit=3)
    assert results["results"]["demo"]["llm_judge"] == 1.0  # from the judge that answered
    assert results["infrastructure_failures"]["demo"]["calls"] == 3  # counted, not folded in as 0
    failed = [json.loads(line) for line in (tmp_path / "run" / "judge1_calls.jsonl").read_text().splitlines()]
    assert len(failed) == 3 and all("error" in line and "response" not in line for line in failed)


def test_the_crag_judge_file_replays_crag_scores(tmp_path):
    """Every judge writes judgeN_calls.jsonl, the CRAG judges too: scoring the run's predictions again with
    it as the judge gives the same CRAG numbers."""
    records = [crag_record(i) for i in (1, 3, 5, 7)]  # odd: the public test split
    data = write_jsonl(tmp_path / "crag.jsonl", records)
    model = tmp_path / "model.json"
    model.write_text(json.dumps([{"pattern": r"question [15]\?", "response": "answer 1"}, {"response": "zebrafish"}]))
    judge = tmp_path / "judge.json"
    judge.write_text(
        json.dumps([{"pattern": "zebrafish", "response": '{"accuracy": true}'}, {"response": '{"accuracy": false}'}])
    )
    task = {"data": {"crag_t1": str(data)}, "task_args": {"tokenizer": tokenizer_dir(), "embedder": EMBEDDER}}
    first = run(
        tmp_path,
        tasks=["crag_t1"],
        system="closed_book",
        model=f"scripted:{model}",
        judges=[f"scripted:{judge}"],
        **task,
    )
    assert len((tmp_path / "run" / "judge0_calls.jsonl").read_text().splitlines()) == 3  # the judged ones
    predictions = predictions_of(tmp_path / "run", "crag_t1", tmp_path / "p.jsonl")
    again = run(
        tmp_path,
        name="again",
        tasks=["crag_t1"],
        system="recorded",
        system_args={"path": str(predictions)},
        judges=[f"replay:{tmp_path / 'run' / 'judge0_calls.jsonl'}"],
        **task,
    )
    assert again["results"]["crag_t1"] == first["results"]["crag_t1"]
    assert first["results"]["crag_t1"]["accuracy"] == 0.75  # exact match, judged right twice, judged wrong


@pytest.mark.model
def test_the_embedded_model_judges_a_run_and_every_reply_is_parsed_or_counted(tmp_path):
    pytest.importorskip("transformers")
    results = judged_demo_run(tmp_path, ["hf:embedded"], limit=3)
    scored = samples(tmp_path / "run", "demo")
    replies = [step["response"]["texts"][0] for s in scored for step in s["judge_trace"]]
    assert len(replies) == 3 and all(reply.strip() for reply in replies)  # real generations
    verdicts = [LlmJudge().parse(reply) for reply in replies]
    assert results["results"]["demo"]["llm_judge_unparsed"] == sum(v is None for v in verdicts)
    parsed = [v for v in verdicts if v is not None]  # greedy: the same replies every run
    assert parsed and results["results"]["demo"]["llm_judge"] == pytest.approx(sum(parsed) / len(parsed))


def test_judging_faithfulness_without_documents_is_an_error_not_a_score(tmp_path):
    rules = tmp_path / "judge.json"
    rules.write_text(json.dumps([{"response": "5"}]))
    options = {
        "model": "scripted:echo",
        "limit": 2,
        "metrics": ["llm_judge"],
        "judges": [f"scripted:{rules}"],
        "metric_args": {"llm_judge.preset": "faithfulness"},
    }
    closed = run(tmp_path, tasks=["demo"], system="closed_book", **options)
    assert closed["details"]["demo"]["llm_judge"]["n_errors"] == 2 and closed["results"]["demo"]["llm_judge"] is None
    assert "this prediction has none" in samples(tmp_path / "run", "demo")[0]["score_errors"]["llm_judge"]
    shown = run(tmp_path, name="shown", tasks=["demo"], system="vanilla", **options)
    assert shown["results"]["demo"]["llm_judge"] == 1.0
    sent = samples(tmp_path / "shown", "demo")[0]["judge_trace"][0]["request"]["messages"][0]["content"]
    assert "[1] France\nParis is the capital" in sent


def judged_run(tmp_path, name, metrics):
    """A demo run whose sampled llm_judge (temperature 1) answers by its request's seed (`coin_judge`)."""
    run_eval(
        "demo",
        "closed_book",
        "scripted:echo",
        limit=6,
        metrics=metrics,
        metric_args={"llm_judge.temperature": 1.0},
        judges=[scoring_plugin.COIN_JUDGE],
        output=tmp_path / name,
        bootstrap_iters=20,
        registry=scoring_plugin.registry(),
    )
    return samples(tmp_path / name, "demo")


def test_a_sampled_judges_requests_and_verdicts_do_not_change_with_the_other_metrics_of_the_run(tmp_path):
    alone = judged_run(tmp_path, "alone", ["llm_judge"])
    beside = judged_run(tmp_path, "beside", ["scored:judged", "llm_judge"])  # another metric asks the judge first

    def requests(sample):
        return [step["request"] for step in sample["judge_trace"] if step["name"] == "judge:llm_judge"]

    assert [requests(s) for s in alone] == [requests(s) for s in beside]  # the same seeds and prompts
    assert all(request["sampling"]["seed"] is not None for s in alone for request in requests(s))
    assert [s["scores"]["llm_judge"] for s in alone] == [s["scores"]["llm_judge"] for s in beside]
    other = [
        step["request"]["sampling"]["seed"]
        for s in beside
        for step in s["judge_trace"]
        if step["name"] == "judge:scored:judged"
    ]
    assert len(other) == 6 and not set(other) & {r["sampling"]["seed"] for s in alone for r in requests(s)}

"""The `deep_research_bench` task and `drb_race` metric against DeepResearch Bench's released RACE script run unchanged
on the same fake Gemini judge (tests/data/parity/drb_race/drb_race_calls.json, recorded by record_drb_race.py
there, on sample data written for ragbench): the same request bodies, the same scores per task and on average;
its reply reading and weighting on replies written to reach each of their branches; and the judged numbers carry
repeats, agreement, PPI and cost as every judged metric's do."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_engine_openai import FakeServer

from conftest import TEST_DATA, needs
from ragbench.api import ConfigError, Example, Prediction, RecordError
from ragbench.metrics.drb_race.metric import KEYS, DeepResearchBenchRace
from ragbench.metrics.drb_race.reply_json import DIMENSIONS, reply_json
from ragbench.tasks.deep_research_bench.task import DeepResearchBench as RaceTask
from ragbench.testing import ScriptedLLM, make_context
from support.drb_fake_gemini import camel, fake_gemini, gemini_url
from support.helpers import cli_here, samples, score_args

HERE = TEST_DATA / "parity" / "drb_race"
RECORDING = json.loads((HERE / "drb_race_calls.json").read_text(encoding="utf-8"))
REPLIES = json.loads((HERE / "replies.json").read_text(encoding="utf-8"))
DATA = HERE / "data"
REPORTS = DATA / "test_data" / "raw_data"
# the released script's judge and thinking budget (utils/api.py)
JUDGE = ("--judge", "gemini:gemini-2.5-pro-preview-06-05", "--judge-arg", "0.thinking_config={thinking_budget: 16000}")
DRB_KEYS = {"race": "overall_score", **{f"race_{dim}": dim for dim in DIMENSIONS}}  # ragbench key -> the script's
SUMMARY = {
    "Comprehensiveness": "race_comprehensiveness",
    "Insight": "race_insight",
    "Readability": "race_readability",
    "Instruction Following": "race_instruction_following",
    "Overall Score": "race",
}

pytestmark = needs("google.genai")


def requests_of(fake: FakeServer) -> list[str]:
    return sorted(json.dumps(camel({"path": r["path"], "body": r["body"]}), sort_keys=True) for r in fake.requests)


RECORDED = sorted(json.dumps(camel(r), sort_keys=True) for r in RECORDING["requests"])


@pytest.fixture
def judge():
    fake = fake_gemini()
    yield fake
    fake.stop()


def score(tmp_path: Path, judge: FakeServer, *extra: str) -> tuple[Path, dict]:
    out = tmp_path / "run"
    env = {"GOOGLE_GEMINI_BASE_URL": gemini_url(judge), "GEMINI_API_KEY": "fake"}
    done = cli_here(*score_args("deep_research_bench", DATA, REPORTS), *JUDGE, "--output", str(out), *extra, env=env)
    assert done.returncode == 0, done.stderr
    return out, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_requests_and_scores_equal_the_released_script(tmp_path, judge):
    out, results = score(tmp_path, judge)
    assert requests_of(judge) == RECORDED and len(RECORDED) == 6  # 3 cleanings (Chinese prompt), 3 scorings
    by_id = {str(line["id"]): line for line in RECORDING["raw_results"]}
    scored = {line["id"]: line["scores"] for line in samples(out, "deep_research_bench")}
    assert scored == {task: {key: by_id[task][name] for key, name in DRB_KEYS.items()} for task in by_id}
    headline = results["results"]["deep_research_bench"]
    for line in RECORDING["race_result"].splitlines():
        name, value = line.rsplit(": ", 1)
        assert f"{headline[SUMMARY[name]]:.4f}" == value
        mean = sum(result[DRB_KEYS[SUMMARY[name]]] for result in RECORDING["raw_results"]) / len(by_id)
        assert headline[SUMMARY[name]] == pytest.approx(mean, rel=1e-12)


def test_repeats_agreement_ppi_and_cost_of_the_judged_numbers(tmp_path, judge):
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(json.dumps({"id": i, "metric": "race", "label": v}) + "\n" for i, v in (("1", 0.6), ("2", 0.7))),
        encoding="utf-8",
    )
    _, results = score(tmp_path, judge, "--judge-repeats", "2", "--human-labels", str(labels))
    assert len(judge.requests) == 12 and set(requests_of(judge)) == set(RECORDED)  # a repeat is the script's request
    agreement = results["judge_agreement"]["deep_research_bench"]["race"]
    assert agreement["measured"] and agreement["percent_agreement"] == 1.0
    assert results["details"]["deep_research_bench"]["race"]["ppi"] is not None
    cost = results["judge_cost"]["deep_research_bench"]["drb_race"]
    assert cost["calls"] == 12 and cost["model"] == "gemini:gemini-2.5-pro-preview-06-05"


def test_a_live_run_writes_reports_from_the_task_prompt_and_its_estimate_counts_the_judge(tmp_path, judge):
    report = (
        "A report written by a scripted model: it names figures, causes and a recommendation, long enough to clean."
    )
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([{"response": report}]), encoding="utf-8")
    out, env = tmp_path / "run", {"GOOGLE_GEMINI_BASE_URL": gemini_url(judge), "GEMINI_API_KEY": "fake"}
    run = ("--tasks", "deep_research_bench", "--data", f"deep_research_bench={DATA}", "--system", "closed_book")
    done = cli_here(
        "estimate", *run, "--model", f"scripted:{answers}", *JUDGE, "--output", str(out), "--pilot", "100%", env=env
    )
    assert done.returncode == 0, done.stderr
    assert "llm calls (judge:drb_race): 6 " in done.stdout
    lines = samples(out, "deep_research_bench")
    assert all(line["error"] is None and set(line["scores"]) == set(KEYS) for line in lines)
    asked = {line["question"]: line["trace"][0]["request"] for line in lines}
    assert all(
        request["prompt"] == question and request["sampling"]["max_tokens"] == 8192
        for question, request in asked.items()
    )


def example(task_id: str) -> Example:
    return next(e for e in RaceTask(DATA).examples() if isinstance(e, Example) and e.id == task_id)


def scored_reply(reply: str, **options: Any) -> tuple[dict, Counter]:
    counted: Counter = Counter()
    judge = ScriptedLLM([REPLIES["cleaned_report"], reply])
    ctx = make_context("demo", judges=[judge])
    ctx.count = lambda name: counted.update([name])
    task = example(str(REPLIES["task_id"]))
    values = asyncio.run(DeepResearchBenchRace(**options).score(task, Prediction(task.id, answer="A report."), ctx))
    return values, counted


@pytest.mark.parametrize("case", RECORDING["replies"], ids=lambda case: case["name"])
def test_reply_reading_and_weighting_equal_the_released_scoring(case):
    reply = next(c["reply"] for c in REPLIES["cases"] if c["name"] == case["name"])
    assert reply_json(reply) == case["extracted"]
    values, counted = scored_reply(reply)
    if "error" in case["result"]:  # the script leaves the task out of its averages
        assert values == dict.fromkeys(KEYS) and counted == Counter(race_unparsed=1)
    else:
        assert values == {key: case["result"][name] for key, name in DRB_KEYS.items()} and not counted


def test_a_cleaned_report_under_100_characters_is_counted_and_left_out():
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[ScriptedLLM(["too short"])])
    ctx.count = lambda name: counted.update([name])
    task = example("3")
    values = asyncio.run(DeepResearchBenchRace().score(task, Prediction(task.id, answer="A report."), ctx))
    assert values == dict.fromkeys(KEYS) and counted == Counter(race_clean_invalid=1)


def test_clean_language_task_cleans_with_the_task_language_and_others_are_refused():
    judge = ScriptedLLM([REPLIES["cleaned_report"], REPLIES["cases"][0]["reply"]])
    ctx = make_context("demo", judges=[judge])
    task = example("2")
    asyncio.run(DeepResearchBenchRace(clean_language="task").score(task, Prediction(task.id, answer="A report."), ctx))
    assert judge.requests[0].message_dicts()[0]["content"].startswith("\n<system_role>You are a professional")
    with pytest.raises(ConfigError, match="clean_language=fr is not one of zh, en, task"):
        DeepResearchBenchRace(clean_language="fr")


def test_a_task_without_criteria_is_a_counted_bad_record(tmp_path):
    for sample in ("prompt_data/query.jsonl", "criteria_data/criteria.jsonl", "test_data/cleaned_data/reference.jsonl"):
        (tmp_path / sample).parent.mkdir(parents=True, exist_ok=True)
        lines = (DATA / sample).read_text(encoding="utf-8").splitlines(keepends=True)
        (tmp_path / sample).write_text("".join(lines[1:] if "criteria" in sample else lines), encoding="utf-8")
    found = list(RaceTask(tmp_path).examples())
    assert [e.id for e in found if isinstance(e, Example)] == ["2", "3"]
    (bad,) = [e for e in found if isinstance(e, RecordError)]
    assert "query.jsonl:1: task 1 has no criteria with its prompt (RACE skips it)" in str(bad)


def test_a_folder_of_two_models_reports_is_refused_in_one_line(tmp_path):
    for name in ("a.jsonl", "b.jsonl", "reference.jsonl"):
        (tmp_path / name).write_text((REPORTS / "sample-model.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"expected one MODEL\.jsonl of reports .* found a\.jsonl, b\.jsonl"):
        list(RaceTask(DATA).prediction_records(tmp_path))


def test_the_data_folder_is_asked_for_then_each_of_its_files(tmp_path):
    """No --data: one line saying what to pass; a data folder without the queries file: one line naming it."""
    with pytest.raises(ConfigError) as caught:
        RaceTask().prepare()
    assert str(caught.value) == (
        "task deep_research_bench reads DeepResearch Bench's data: pass --data deep_research_bench=DATA, the data/ "
        "folder of a clone of github.com/Ayanami0730/deep_research_bench"
    )
    with pytest.raises(ConfigError, match=r"^DeepResearch Bench's queries file .*query\.jsonl not found: --data"):
        RaceTask(tmp_path).prepare()

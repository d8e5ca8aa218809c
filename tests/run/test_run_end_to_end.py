"""Whole runs with the scripted engine: outputs, samples, results layout, resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from conftest import write_jsonl
from ragbench.api.trace import trace_prompts
from ragbench.testing import installed_registry
from support.helpers import cli_here, cli_run_args, comparable, run, samples, task_counts


def test_results_json_is_laid_out_like_lm_eval(tmp_path, popqa_records):
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records)
    results = run(tmp_path, tasks=["popqa"], system="vanilla", model="scripted:echo", data={"popqa": str(data)})
    assert set(results["results"]["popqa"]) == {"match", "selfrag_match", "match_normalized", "em", "f1"}
    detail = results["details"]["popqa"]["match"]
    assert detail["n"] == 6 and detail["n_errors"] == 0 and "ci95" in detail
    assert results["counts"]["popqa"] == task_counts(6, 6)
    assert results["config"]["system"] == "vanilla" and results["config"]["seed"] == 0
    assert results["versions"]["ragbench"] and "numpy" in results["versions"]["packages"]
    assert results["cost"]["llm_calls"] == 6 and results["cost"]["examples_per_second"] > 0
    assert (tmp_path / "run" / "report.md").read_text().startswith("# ragbench run")
    assert json.loads((tmp_path / "run" / "run.json").read_text())["finished"] is True


def test_samples_record_prompt_output_scores_and_trace(tmp_path, popqa_records):
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records)
    run(
        tmp_path,
        tasks=["popqa"],
        system="vanilla",
        model="scripted:echo",
        data={"popqa": str(data)},
        system_args={"top_n": 2},
    )
    first = samples(tmp_path / "run", "popqa")[0]
    assert first["id"] == "100" and first["gold"] == {"answers": ["answer0", "alias0"]}
    assert (
        trace_prompts(first["trace"])[0].startswith("Below is an instruction")
        and "[2] Other 0" in trace_prompts(first["trace"])[0]
    )
    assert first["output"] == "### Response:"  # echo returns the prompt's last line
    assert first["scores"]["match"] == 0.0
    assert [d["title"] for d in first["prediction"]["docs"]] == ["Title 0", "Other 0"]
    search, answer = first["trace"]
    assert search["kind"] == "retrieval" and search["request"] == {
        "retriever": "provided",
        "query": "Who is person 0?",
        "k": 2,
    }
    assert answer["kind"] == "llm" and answer["response"]["texts"] == ["### Response:"]


def test_scored_answers_come_from_the_model_output(tmp_path, popqa_records):
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records)
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps(
            [
                {"pattern": r"person [024]\?", "response": " answer0 or answer2 or answer4\n\nmore"},
                {"response": "no idea"},
            ]
        )
    )
    results = run(tmp_path, tasks=["popqa"], system="closed_book", model=f"scripted:{rules}", data={"popqa": str(data)})
    assert results["results"]["popqa"]["match"] == 0.5
    assert samples(tmp_path / "run", "popqa")[0]["prediction"]["answer"] == "answer0 or answer2 or answer4"


def test_groups_expand_and_limit_applies_per_task(tmp_path, popqa_records):
    from conftest import shared_reference

    ref = shared_reference() / "selfrag"
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records)
    results = run(
        tmp_path,
        tasks=["selfrag_suite"],
        model="scripted:echo",
        limit=2,
        nli="scripted:echo",
        data={
            "popqa": str(data),
            "arc_challenge": str(ref / "arc_challenge_processed.sample.jsonl"),
            "pubhealth": "tests/data/selfrag/health_claims_processed.sample.jsonl",
            "asqa": "tests/data/alce/asqa_eval_gtr_top100.json",
        },
    )
    assert list(results["results"]) == ["pubhealth", "arc_challenge", "popqa", "asqa"]
    assert all(c["records"] == 2 for c in results["counts"].values())


def test_task_defaults_set_system_options(tmp_path):
    run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo", limit=1)
    sampling = samples(tmp_path / "run", "demo")[0]["trace"][0]["request"]["sampling"]
    assert sampling["max_tokens"] == 24  # registry.yaml: demo defaults
    run(
        tmp_path,
        "run2",
        tasks=["demo"],
        system="closed_book",
        model="scripted:echo",
        limit=1,
        system_args={"max_tokens": 7},
    )
    assert samples(tmp_path / "run2", "demo")[0]["trace"][0]["request"]["sampling"]["max_tokens"] == 7


def test_resume_after_a_kill_finishes_without_rerunning_and_matches_an_uninterrupted_run(tmp_path):
    common = [
        *cli_run_args("scripted:echo", system="vanilla"),
        "--no-progress",
        "--bootstrap-iters",
        "200",
        "--max-inflight",
        "2",
    ]
    slow = ["--model-arg", "per_request=0.1", "--model-arg", "batch_size=2"]
    killed_dir = tmp_path / "killed"
    process = subprocess.Popen(
        [sys.executable, "-m", "ragbench._cli.main", *common, *slow, "--output", str(killed_dir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    checkpoint = killed_dir / "samples" / "demo.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline and (not checkpoint.exists() or len(checkpoint.read_text().splitlines()) < 6):
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    finished_before = len(checkpoint.read_text().splitlines())
    assert 6 <= finished_before < 24

    resumed = cli_here(*common, *slow, "--output", str(killed_dir), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    results = json.loads((killed_dir / "results.json").read_text())
    resume = json.loads((killed_dir / "run.json").read_text())["attempts"][-1]
    assert resume["examples"] == 24 - finished_before  # finished examples were not re-run
    assert resume["llm_calls"] + resume["cache_hits"] == 24 - finished_before
    assert results["cost"]["examples"] == 24  # the killed attempt's saved samples count in the run's cost

    fresh = cli_here(*common, "--output", str(tmp_path / "fresh"))
    assert fresh.returncode == 0, fresh.stderr
    assert comparable(results) == comparable(json.loads((tmp_path / "fresh" / "results.json").read_text()))
    assert samples(killed_dir, "demo") == [
        {**s, "seconds": r["seconds"], "trace": r["trace"]}
        for s, r in zip(samples(tmp_path / "fresh", "demo"), samples(killed_dir, "demo"))
    ]


def test_resume_refuses_a_folder_run_with_other_options(tmp_path):
    first = cli_here(
        "--tasks", "demo", "--model", "scripted:echo", "--limit", "2", "--no-progress", "--output", str(tmp_path / "r")
    )
    assert first.returncode == 0
    again = cli_here(
        "--tasks",
        "demo",
        "--model",
        "scripted:echo",
        "--limit",
        "3",
        "--no-progress",
        "--output",
        str(tmp_path / "r"),
        "--resume",
    )
    assert again.returncode == 2
    assert "different configuration" in again.stderr and len(again.stderr.strip().splitlines()) == 1


class ToolTask:
    """A task whose examples need a tool started once per run (like CRAG's KG API)."""

    from ragbench.tasks.selfrag.demo import Demo as _Demo

    class Task(_Demo):
        events: list = []

        async def setup(self):
            self.events.append("setup")
            return {"kg": lambda question: f"KG says {len(question)}"}

        async def teardown(self):
            self.events.append("teardown")


class ToolUser:
    from ragbench.api import System as _System

    class System(_System):
        async def run(self, example, ctx):
            from ragbench.api import Prediction

            return Prediction(example_id=example.id, answer=ctx.tools["kg"](example.question))


def test_task_tools_are_set_up_once_and_reach_every_example(tmp_path):

    registry = installed_registry()
    registry.add_catalog(
        {
            "tasks": {"tool_task": {"target": "test_run_end_to_end:ToolTask.Task"}},
            "systems": {"tool_user": {"target": "test_run_end_to_end:ToolUser.System"}},
        },
        "tests",
    )
    run(tmp_path, registry=registry, tasks=["tool_task"], system="tool_user", model="scripted:echo", limit=3)
    assert ToolTask.Task.events == ["setup", "teardown"]
    assert samples(tmp_path / "run", "tool_task")[0]["output"] == "KG says 30"


def test_stop_strings_reach_the_engine_and_cut_the_output(tmp_path, popqa_records):
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records[:1])
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"response": "answer0 then more\nsecond line"}]))
    run(
        tmp_path,
        tasks=["popqa"],
        system="closed_book",
        model=f"scripted:{rules}",
        data={"popqa": str(data)},
        system_args={"stop": "\n"},
    )
    record = samples(tmp_path / "run", "popqa")[0]
    assert record["trace"][0]["request"]["sampling"]["stop"] == ["\n"]
    assert record["output"] == "answer0 then more"

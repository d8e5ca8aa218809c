"""The selfrag system: configuration errors, a whole run on the scripted engine (options recorded,
retrieval statistics, passages batched through the scheduler), and the embedded model without
reflection tokens."""
from __future__ import annotations

import json

import pytest

from ragbench.errors import ConfigError
from ragbench.plugins.selfrag import SelfRag

from helpers import run, samples


def test_adaptive_mode_without_a_threshold_is_a_one_line_config_error():
    with pytest.raises(ConfigError) as caught:
        SelfRag(mode="adaptive_retrieval", threshold=None)
    assert "threshold" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match="mode="):
        SelfRag(mode="default")
    with pytest.raises(ConfigError, match="max_depth"):
        SelfRag(max_depth=1)


def test_run_on_demo_records_options_decisions_and_retrieval_rate(tmp_path):
    results = run(tmp_path, tasks=["demo"], system="selfrag", model="scripted:echo", limit=4,
                  system_args={"threshold": 0.4, "ndocs": 2})
    config = results["config"]["system_config"]["demo"]
    assert config["threshold"] == 0.4 and config["retrieval_ratio"] == "logprob" and config["skip_special_tokens"] is True
    assert config["resolved"] == {"form": "short", "mode": "adaptive_retrieval", "ndocs": 2, "w_use": 1.0, "closed": False}
    stats = results["system_stats"]["demo"]
    # scripted:echo is certain of every token and never generates [Retrieval] first: both retrieval
    # tokens are missing (-100 each) -> raw log-prob ratio 0.5 > 0.4 -> retrieve
    assert stats["retrieval_rate"] == 1.0 and stats["mean_retrieval_ratio"] == 0.5
    record = samples(tmp_path / "run", "demo")[0]
    trace = record["prediction"]["extras"]["selfrag"]
    assert trace["retrieved"] and len(trace["passages"]) == 2
    steps = [s["name"] for s in record["trace"] if s["kind"] == "llm"]
    assert steps == ["selfrag:decide", "selfrag:passage", "selfrag:passage"]
    passage_request = next(s["request"] for s in record["trace"] if s["name"] == "selfrag:passage")
    assert passage_request["prompt"].startswith("### Instruction:\n")
    assert "[Retrieval]<paragraph>" in passage_request["prompt"] and passage_request["prompt"].endswith("</paragraph>")
    assert "[Relevant]" in passage_request["sampling"]["logprob_tokens"]


def test_no_retrieval_mode_continues_after_the_no_retrieval_token(tmp_path):
    run(tmp_path, tasks=["demo"], system="selfrag", model="scripted:echo", limit=1, system_args={"mode": "no_retrieval"})
    record = samples(tmp_path / "run", "demo")[0]
    (step,) = [s for s in record["trace"] if s["kind"] == "llm"]
    assert step["request"]["prompt"].endswith("\n\n### Response:\n[No Retrieval]")
    assert record["prediction"]["extras"]["selfrag"]["retrieved"] is False


def test_passage_generations_of_all_questions_share_batches(tmp_path):
    from ragbench.engines.base import Request
    from ragbench.engines.scripted import ScriptedEngine

    import asyncio

    from llatrieval_helpers import run_system
    from ragbench.tasks.demo.task import Demo

    task = Demo()
    task.prepare()
    examples = [e for e in task.examples()][:6]
    system = SelfRag(mode="always_retrieve", ndocs=3)
    predictions, engine, _ = asyncio.run(run_system(system, examples, lambda r: "[Relevant]yes", task=task))
    assert all(p.extras["selfrag"]["retrieved"] for p in predictions)
    assert sum(engine.batch_sizes) == 18 and max(engine.batch_sizes) > 3  # not one question at a time


@pytest.mark.model
def test_embedded_model_without_reflection_tokens_fails_each_example_with_the_reason(tmp_path):
    results = run(tmp_path, tasks=["demo"], system="selfrag", model="hf:embedded", limit=1,
                  system_args={"mode": "always_retrieve", "max_new_tokens": 2, "ndocs": 1})
    record = samples(tmp_path / "run", "demo")[0]
    assert "not single tokens" in json.dumps(record.get("error")) and "[Relevant]" in json.dumps(record.get("error"))
    assert results is not None

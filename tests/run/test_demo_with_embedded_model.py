"""The README's first command, on the real embedded model (SmolLM2-135M-Instruct via transformers)."""

from __future__ import annotations

import json

import pytest

from support.helpers import cli_here, task_counts

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("demo") / "run"
    result = cli_here("--tasks", "demo", "--system", "vanilla", "--limit", "6", "--output", str(out))  # with its bar
    return result, out


def test_demo_runs_offline_on_the_embedded_model(demo_run):
    result, out = demo_run
    assert result.returncode == 0, result.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["model"] == "hf:embedded"
    assert results["model_cost"]["demo"]["model"] == "hf:embedded"  # the default named, not "?"
    assert "demo: the system's model hf:embedded: 6 calls" in result.stdout
    assert results["counts"]["demo"] == task_counts(6, 6)
    assert results["cost"]["llm_calls"] == 6 and results["cost"]["completion_tokens"] > 0
    assert "| demo | match |" in result.stdout
    # what the console says while the model loads (and, on a machine's first run, converts), before the bar
    lines = result.stderr.splitlines()
    loading = lines.index("ragbench: loading model hf:embedded ...")
    assert all("examples [" not in line for line in lines[:loading])  # said before the bar starts


def test_demo_answers_are_real_generations_scored_against_gold(demo_run):
    _, out = demo_run
    samples = [json.loads(line) for line in (out / "samples" / "demo.jsonl").read_text().splitlines()]
    assert all(s["output"].strip() for s in samples)
    assert len({s["output"] for s in samples}) > 1
    # greedy decoding: the first question ("capital of France", passage given) is answered with Paris
    assert samples[0]["scores"]["match"] == 1.0

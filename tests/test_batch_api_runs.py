"""Runs with `--model-arg batch=true` (and `--judge-arg N.batch=true`) against the fake batch servers
(tests/batch_fake.py): a real `ragbench` killed with SIGKILL while its batch is out resumes by polling the same
batch, never submitting it again; judge calls go in batches too; and batch calls are priced at the batch rate."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batch_fake import FakeBatchServer
from conftest import needs
from helpers import cli_here, cli_run_args, run, samples
from ragbench._engines.batch_store import BATCHES_DIR
from ragbench._reports.prices import model_price, read_price_table
from ragbench.api import ConfigError
from test_llm_judge import judged_demo_run

ROOT = Path(__file__).resolve().parent.parent
DEMO = 24  # the demo task's records


@pytest.fixture
def fake():
    server = FakeBatchServer()
    yield server
    server.hold.clear()
    server.stop()


@pytest.fixture(autouse=True)
def no_ambient_keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def batch_args(fake: FakeBatchServer, vendor: str) -> list[str]:
    model, base = ("openai:m", fake.root + "/v1") if vendor == "openai" else ("anthropic:claude", fake.root)
    return cli_run_args(
        model,
        *("--model-arg", f"base_url={base}", "--model-arg", "batch=true", "--model-arg", "batch_poll_s=0.01"),
        *("--no-progress", "--bootstrap-iters", "20"),
    )


@pytest.mark.parametrize(
    ("vendor", "stop"),
    [
        pytest.param("openai", signal.SIGKILL, id="openai-SIGKILL"),
        pytest.param("anthropic", signal.SIGKILL, marks=needs("anthropic"), id="anthropic-SIGKILL"),
        # stopped as Ctrl-C stops it: it exits at once, its poll still out
        pytest.param("openai", signal.SIGTERM, id="openai-SIGTERM"),
    ],
)
def test_a_run_killed_between_creating_its_batch_and_polling_it_resumes_the_same_batch(fake, vendor, stop, tmp_path):
    out = tmp_path / "run"
    args = [*batch_args(fake, vendor), "--output", str(out)]
    first_poll, release = threading.Event(), threading.Event()

    def stall(batch: dict[str, Any]) -> None:  # the first poll gets no answer until the run is killed
        first_poll.set()
        release.wait(120)

    fake.on_poll = stall
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}
    with (tmp_path / "stderr.txt").open("w") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "ragbench._cli.main", *args], stdout=subprocess.DEVNULL, stderr=errors, env=env
        )
    try:
        while not first_poll.wait(0.5):  # the run polls its batch, or has ended without (a failure, said)
            assert process.poll() is None, (tmp_path / "stderr.txt").read_text()
        records = list((out / BATCHES_DIR).glob("*.json"))
        assert len(records) == 1 and not json.loads(records[0].read_text())["ended"]  # written before the poll
        process.send_signal(stop)
        assert process.wait(60) == (-signal.SIGKILL if stop == signal.SIGKILL else 128 + stop)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        fake.on_poll = None
        release.set()
    assert len(fake.created) == 1 and len(fake.sent) == DEMO

    resumed = cli_here(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert len(fake.created) == 1 and len(fake.sent) == DEMO  # the same batch, polled: nothing submitted twice
    results = json.loads((out / "results.json").read_text())
    assert results["counts"]["demo"]["scored"] == DEMO and results["counts"]["demo"]["failed"] == 0
    engine = results["cost"]["engine"]
    assert (engine["batches_resumed"], engine["batches_submitted"], engine["batch_requests_sent"]) == (1, 0, 0)
    lines = samples(out, "demo")
    assert len(lines) == DEMO and all(line["prediction"]["answer"].startswith("echo") for line in lines)


def test_judge_calls_go_in_batches_priced_at_the_batch_prices_of_the_table(fake, tmp_path):
    table = tmp_path / "prices.yaml"
    table.write_text("openai:judge: {prompt: 4.0, completion: 8.0, batch_prompt: 1.0, batch_completion: 3.0}\n")
    results = judged_demo_run(
        tmp_path,
        ["openai:judge"],
        judge_args={"0": {"base_url": fake.root + "/v1", "batch": True, "batch_poll_s": 0}},
        price_table=str(table),
    )
    # the judge calls of the examples each batch of the system's model (16 at most) ended, pooled in one batch
    assert [len(fake.batches[b]["lines"]) for b in fake.created] == [16, DEMO - 16]
    assert results["results"]["demo"]["llm_judge"] is not None
    cost = results["judge_cost"]["demo"]["llm_judge"]
    assert cost["price_per_million"] == {"prompt": 1.0, "completion": 3.0}
    assert cost["usd"] == pytest.approx((cost["prompt_tokens"] * 1.0 + cost["completion_tokens"] * 3.0) / 1e6)


def test_a_batch_models_calls_cost_half_its_price_without_batch_prices(fake, tmp_path):
    table = tmp_path / "prices.yaml"
    table.write_text("m: {prompt: 2.0, completion: 4.0}\n")
    results = run(
        tmp_path,
        tasks=["demo"],
        system="closed_book",
        model="openai:m",
        model_args={"base_url": fake.root + "/v1", "batch": True, "batch_poll_s": 0},
        price_table=str(table),
        limit=4,
    )
    cost = results["model_cost"]["demo"]
    assert cost["price_per_million"] == {"prompt": 1.0, "completion": 2.0}
    assert cost["calls"] == 4 and len(fake.created) == 1


finite = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=50, deadline=None)
@given(prompt=finite, completion=finite, batch=st.none() | st.tuples(finite, finite))
def test_the_batch_price_is_the_tables_batch_price_else_half(prompt, completion, batch):
    entry = {"prompt": prompt, "completion": completion}
    if batch is not None:
        entry.update(batch_prompt=batch[0], batch_completion=batch[1])
    table = {"openai:m": entry}
    assert model_price("openai:m", {}, table) == {"prompt": prompt, "completion": completion}
    given_batch = (prompt / 2, completion / 2) if batch is None else batch
    expected = {"prompt": given_batch[0], "completion": given_batch[1]}
    assert model_price("openai:m", {"batch": True}, table) == expected


def test_the_default_openai_prices_are_halved_for_a_batch_model():
    halved = {"prompt": 0.075, "completion": 0.3, "cached_prompt": 0.0375}  # the cached-input price too
    assert model_price("openai:gpt-4o-mini", {"batch": True}, {}) == halved


@pytest.mark.parametrize("entry", ["{prompt: 1, completion: 2, batch_prompt: 0.5}", "{prompt: 1, batch_prompt: 1}"])
def test_a_table_entry_with_one_batch_price_only_is_refused_in_one_line(tmp_path, entry):
    table = tmp_path / "prices.yaml"
    table.write_text(f"m: {entry}\n")
    with pytest.raises(ConfigError) as raised:
        read_price_table(table)
    assert "batch_prompt and batch_completion" in str(raised.value) and "\n" not in str(raised.value)

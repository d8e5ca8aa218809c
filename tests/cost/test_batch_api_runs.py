"""Runs with `--model-arg batch=true` (and `--judge-arg N.batch=true`) against the fake batch servers
(tests/support/batch_fake.py): a real `ragbench` killed with SIGKILL while its batch is out resumes by polling the same
batch, never submitting it again; judge calls go in batches too; and batch calls are priced at the batch rate
(test_batch_prices.py: the batch prices of a table and the built-in ones)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

import pytest
from test_batch_api_damaged import damage
from test_llm_judge import judged_demo_run

from conftest import needs
from support import paths
from support.batch_fake import FakeBatchServer, fake, no_ambient_keys  # noqa: F401 (fixtures)
from support.helpers import cli_here, cli_run_args, run, samples

ROOT = paths.REPO
DEMO = 24  # the demo task's records
BATCHES_DIR = "batches"  # a run folder's record of each batch it sent (docs/engines.md)


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


@pytest.mark.parametrize("vendor", ["openai", pytest.param("anthropic", marks=needs("anthropic"))])
def test_a_run_killed_after_the_vendor_created_its_batch_before_recording_its_id_adopts_it(fake, vendor, tmp_path):
    """The kill lands after the vendor has created the batch and before its answer reaches ragbench: the run folder
    holds only the intent; the resumed run finds the batch at the vendor and polls it, never creating another."""
    out = tmp_path / "run"
    args = [*batch_args(fake, vendor), "--output", str(out)]
    created, release = threading.Event(), threading.Event()

    def stall(batch: dict[str, Any]) -> None:  # the vendor has created it; its answer waits until the kill
        created.set()
        release.wait(120)

    fake.on_create = stall
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}
    with (tmp_path / "stderr.txt").open("w") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "ragbench._cli.main", *args], stdout=subprocess.DEVNULL, stderr=errors, env=env
        )
    try:
        while not created.wait(0.5):
            assert process.poll() is None, (tmp_path / "stderr.txt").read_text()
        process.kill()
        assert process.wait(60) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        fake.on_create = None
        release.set()
    (record,) = [json.loads(path.read_text()) for path in (out / BATCHES_DIR).glob("*.json")]
    assert record["batch"] is None and len(record["custom_ids"]) == DEMO  # the intent, written before the creation

    resumed = cli_here(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert len(fake.created) == 1 and len(fake.sent) == DEMO  # the one batch, adopted: nothing paid twice
    results = json.loads((out / "results.json").read_text())
    assert results["counts"]["demo"]["scored"] == DEMO and results["counts"]["demo"]["failed"] == 0
    engine = results["cost"]["engine"]
    assert (engine["batches_adopted"], engine["batches_resumed"], engine["batches_submitted"]) == (1, 1, 0)


def test_a_run_whose_batch_the_vendor_does_not_know_fails_its_examples_in_one_line_and_resends_nothing(fake, tmp_path):
    fake.on_poll = lambda batch: fake.forget(batch["id"])  # the vendor answers HTTP 404 from the next poll on
    args = [*batch_args(fake, "openai"), "--output", str(tmp_path / "run"), "--limit", "4"]
    for attempt in ("first", "resumed"):
        done = cli_here(*args, *(["--resume"] if attempt == "resumed" else []))
        assert done.returncode == 1, done.stderr
        errors = {line["error"] for line in samples(tmp_path / "run", "demo")}
        (error,) = errors
        assert "batch batch_1 is unknown to the vendor (HTTP 404" in error and "\n" not in error
        assert "resume with that key, or move " in error and "send its 4 requests again (paid again)" in error
    assert len(fake.created) == 1


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
    # the judge's batches counted beside the model's figures (the scripted model has none)
    assert "engine" not in results["cost"]
    figures = results["cost"]["other_engines"]["judge 1"]
    assert (figures["batches_submitted"], figures["batch_requests_sent"], figures["batch_requests_failed"]) == (
        2,
        24,
        0,
    )
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


def test_a_run_whose_batch_results_are_damaged_fails_those_examples_as_the_vendors_and_resume_resends_them(
    fake, tmp_path
):
    """One result line of a custom id twice, one cut short: those two examples fail saying why, the rest are
    answered; `--resume` sends those two again, in one new batch, and finishes the run."""
    fake.then({"status": "completed", "damage": damage(["twice", "garbled0", "ok", "ok"], [])})
    args = [*batch_args(fake, "openai"), "--model-arg", "batch_retries=0", "--output", str(tmp_path / "run")]
    first = cli_here(*args, "--limit", "4")
    assert first.returncode == 1, first.stderr
    errors = sorted(line["error"] for line in samples(tmp_path / "run", "demo") if line.get("error"))
    assert len(errors) == 2 and all("batch request not answered" in error for error in errors)
    assert "batch_1 ended without it (1 of its result lines unreadable)" in errors[0]
    assert "batch_1's results hold 2 lines of its custom id: neither is taken" in errors[1]
    resumed = cli_here(*args, "--limit", "4", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert not [line for line in samples(tmp_path / "run", "demo") if line.get("error")]
    assert len(fake.created) == 2 and len(fake.batches["batch_2"]["lines"]) == 2

"""--resume never trusts a "finished" flag alone, and Ctrl-C stops at once, keeping what is saved."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import time

import pytest

from ragbench.api.run import finished_run
from ragbench.testing import run_eval
from support.helpers import cli_here, samples
from support.run_builders import LoadCounted, counting_registry

DEMO = {"task": "demo", "system": "vanilla"}


def run(tmp_path, model: str = "scripted:echo", **config):
    return run_eval(**DEMO, model=model, output=tmp_path / "run", bootstrap_iters=200, **config)


def resume(tmp_path, model: str = "scripted:echo", **config):
    return run(tmp_path, model, resume=True, **config)


def test_resume_rebuilds_a_deleted_results_json_from_the_samples_without_a_model(tmp_path):
    registry = counting_registry()
    first = run(tmp_path, "counted:echo", registry=registry).results
    assert LoadCounted.loads == 1
    (tmp_path / "run" / "results.json").unlink()
    outcome = resume(tmp_path, "counted:echo", registry=registry)
    assert LoadCounted.loads == 1  # no model was loaded
    assert outcome.already_finished and outcome.complete
    rebuilt = json.loads((tmp_path / "run" / "results.json").read_text())
    assert rebuilt == outcome.results
    assert rebuilt["results"] == first["results"] and rebuilt["counts"] == first["counts"]
    assert rebuilt["cost"]["attempts"] == 1 and rebuilt["cost"]["this_attempt"] is None


def test_resume_rebuilds_an_unreadable_results_json(tmp_path):
    first = run(tmp_path).results
    (tmp_path / "run" / "results.json").write_text('{"results": ')
    outcome = resume(tmp_path)
    assert outcome.already_finished and outcome.results["results"] == first["results"]
    assert json.loads((tmp_path / "run" / "results.json").read_text()) == outcome.results  # rebuilt, readable


def test_resuming_a_finished_run_gives_its_results_typed(tmp_path):
    run(tmp_path)
    outcome = resume(tmp_path)
    assert outcome.already_finished
    assert outcome.results == finished_run(tmp_path / "run", "test").results.to_dict()


def test_resume_runs_a_deleted_sample_line_again(tmp_path):
    run(tmp_path)
    path = tmp_path / "run" / "samples" / "demo.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    kept = lines[:5] + lines[6:]
    path.write_text("".join(kept))
    outcome = resume(tmp_path)
    assert not outcome.already_finished and outcome.complete
    assert outcome.results["counts"]["demo"]["records"] == 24
    assert outcome.results["cost"]["this_attempt"]["examples"] == 1  # only the lost one ran
    assert [s["id"] for s in samples(tmp_path / "run", "demo")] == [json.loads(line)["id"] for line in lines]


def test_resume_of_a_whole_finished_run_loads_nothing_and_keeps_results_json(tmp_path):
    registry = counting_registry()
    run(tmp_path, "counted:echo", registry=registry)
    before = (tmp_path / "run" / "results.json").read_text()
    outcome = resume(tmp_path, "counted:echo", registry=registry)
    assert LoadCounted.loads == 1  # the first run's: the resume loaded no model
    assert outcome.already_finished
    assert (tmp_path / "run" / "results.json").read_text() == before  # kept, not rebuilt


def test_ctrl_c_stops_within_two_seconds_saying_what_is_saved_and_how_to_resume(tmp_path):
    out = tmp_path / "run"
    # every batch takes 2.5 s in the engine: Ctrl-C comes with a slow model mid-generation
    args = [
        "--tasks",
        "demo",
        "--model",
        "scripted:echo",
        "--model-arg",
        "overhead=2.5",
        "--max-inflight",
        "2",
        "--no-progress",
        "--output",
        str(out),
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "ragbench._cli.main", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    saved = out / "samples" / "demo.jsonl"
    deadline = time.monotonic() + 60
    while not (saved.is_file() and saved.read_text().count("\n") >= 2) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # the next batch is in the engine now
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, stderr = process.communicate(timeout=30)
    stopped = time.monotonic() - sent
    assert stopped < 2.0, f"took {stopped:.1f} s to stop"
    assert process.returncode == 130
    assert "Traceback" not in stderr and "Aborted!" not in stderr
    lines = saved.read_text().splitlines()
    command = shlex.join(["ragbench", *args, "--resume"])
    assert stderr.strip().splitlines()[-2:] == [
        f"ragbench: interrupted: {len(lines)} of 24 examples saved in {out}; continue with:",
        f"  {command}",
    ]
    # the printed command continues the run (in one batch here): nothing saved is lost or run again
    finish = cli_here(*shlex.split(command)[1:], "--max-inflight", "64")
    assert finish.returncode == 0, finish.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["counts"]["demo"]["records"] == 24 and results["complete"]
    assert results["cost"]["this_attempt"]["examples"] == 24 - len(lines)


STUCK = """
import hashlib
from ragbench._stop_signals import exit_when_stuck
with exit_when_stuck(lambda signum: f"stopped by signal {signum} while stuck\\n"):
    print("stuck", flush=True)
    hashlib.pbkdf2_hmac("sha256", b"x", b"y", 10**9)  # native code for minutes: no Python signal handler runs
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_while_stuck_in_native_code_still_exits_within_two_seconds(signum):
    process = subprocess.Popen([sys.executable, "-c", STUCK], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "stuck\n"
    time.sleep(0.2)
    process.send_signal(signum)
    sent = time.monotonic()
    _, stderr = process.communicate(timeout=60)
    assert time.monotonic() - sent < 2.0
    assert process.returncode == 128 + signum and stderr == f"stopped by signal {int(signum)} while stuck\n"

"""A real `ragbench` killed at a random moment (SIGKILL, SIGTERM, SIGHUP) leaves no process behind and a run
that `--resume` completes: every example exactly once, the results of an uninterrupted run, and every
attempt's cost counted. The run is a small synthetic CRAG Task 3 (pages parsed in worker processes) on
scripted engines that take their time.

Set RAGBENCH_KILL_SEED to replay the moments of a failed run (its seed is in the failure message)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragbench.tasks.crag.synthetic import PageSizes, write_task3_archive
from support import paths
from support.command_zygote import Zygote
from support.crag_helpers import tokenizer_dir
from support.helpers import cli_run_args, comparable
from support.process_tree import HAVE_PROC, descendants, processes

ROOT = paths.REPO
QUESTIONS = 8
pytestmark = pytest.mark.skipif(not HAVE_PROC, reason="reads processes from /proc (Linux)")


def seed() -> int:
    return int(os.environ.get("RAGBENCH_KILL_SEED") or time.time_ns() % 2**31)


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    return write_task3_archive(
        tmp_path_factory.mktemp("crag_t3"), questions=QUESTIONS, pages=6, sizes=PageSizes.small(4_000)
    )


def command(
    archive: Path, out: Path, overhead: float = 0.3, judge_overhead: float = 0.1, inflight: int = 2
) -> list[str]:
    return [
        *cli_run_args("scripted:echo", task="crag_t3", system="vanilla"),
        "--model-arg",
        f"overhead={overhead}",
        "--judge",
        "scripted:echo",
        "--judge-arg",
        f"0.overhead={judge_overhead}",
        "--data",
        f"crag_t3={archive}",
        "--task-arg",
        f"tokenizer={tokenizer_dir()}",
        "--task-arg",
        "kg=false",
        "--task-arg",
        "embedder=support.crag_helpers:KeywordEmbedder",
        "--max-inflight",
        str(inflight),
        "--no-progress",
        "--bootstrap-iters",
        "50",
        "--output",
        str(out),
    ]


def environment(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]),
        "RAGBENCH_WORKERS": "2",
        "RAGBENCH_PAGE_CACHE": str(tmp_path / "pages.sqlite"),
    }


def start(args: list[str], env: dict[str, str], stderr: Path) -> subprocess.Popen:
    """The command, its stderr to a file (a pipe would stay open as long as any process left behind)."""
    with stderr.open("w") as errors:
        return subprocess.Popen(
            [sys.executable, "-m", "ragbench._cli.main", *args], stdout=subprocess.DEVNULL, stderr=errors, env=env
        )


def finish(zygote: Zygote, args: list[str], env: dict[str, str]) -> dict:
    """The command run to its end (the uninterrupted run, a resume: nothing is signalled, so a fork of the
    tests' command zygote runs it, not a fresh interpreter)."""
    done = zygote.run(args, env)
    assert done.returncode == 0, done.stderr
    return json.loads((Path(args[args.index("--output") + 1]) / "results.json").read_text())


def left_behind(seen: dict[int, str], seconds: float = 60.0) -> dict[int, str]:
    """The processes of `seen` still alive `seconds` after the kill (the same pid and start time). The wait ends
    as soon as none is: a generous bound, since a loaded 2-core machine may take seconds to run a worker's exit."""
    deadline = time.monotonic() + seconds
    while True:
        table = processes()
        alive = {pid: started for pid, started in seen.items() if table.get(pid, (0, None))[1] == started}
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def sample_lines(out: Path) -> int:
    path = out / "samples" / "crag_t3.jsonl"
    return path.read_bytes().count(b"\n") if path.is_file() else 0


def attempts(out: Path) -> list[dict]:
    try:
        return json.loads((out / "run.json").read_text()).get("attempts") or []
    except (OSError, ValueError):  # not written yet, or being replaced
        return []


@pytest.fixture(scope="module")
def uninterrupted(archive, tmp_path_factory, ragbench_zygote):
    tmp_path = tmp_path_factory.mktemp("uninterrupted")
    return finish(ragbench_zygote, command(archive, tmp_path / "run"), environment(tmp_path))


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_run_stopped_at_a_random_moment_leaves_no_process_and_resumes_to_the_same_results(
    tmp_path, archive, uninterrupted, signum, ragbench_zygote
):
    chosen = seed()
    moment = random.Random(chosen).uniform(0.0, 0.8 * uninterrupted["cost"]["wall_seconds"])
    where = f"(RAGBENCH_KILL_SEED={chosen}: {signum.name} {moment:.2f} s into the attempt)"
    out, env = tmp_path / "run", environment(tmp_path)
    args = command(archive, out)
    process = start(args, env, tmp_path / "stderr.txt")
    seen: dict[int, str] = {}
    deadline = time.monotonic() + 120
    while (len(seen) < 3 or not attempts(out)) and time.monotonic() < deadline and process.poll() is None:
        seen.update(descendants(process.pid))  # the forkserver and 2 workers, and the attempt started
        time.sleep(0.02)
    # at the chosen moment, or as the last example's sample is seen, whichever comes first: the moment is drawn
    # from the uninterrupted run's time, and an attempt that ran faster here was otherwise signalled as Python
    # ended the finished command (after its handlers are reset: a bare -15), not while the run was working
    history, killed_at = [], time.monotonic() + moment
    while time.monotonic() < killed_at and process.poll() is None:
        seen.update(descendants(process.pid))
        history.append((time.monotonic(), sample_lines(out)))
        if history[-1][1] >= QUESTIONS:
            killed_at = history[-1][0]
            break
        time.sleep(0.02)
    assert process.poll() is None, f"the run ended before the kill {where}"
    process.send_signal(signum)
    process.wait(timeout=60)
    assert left_behind(seen) == {}, f"processes left behind {where}"
    stderr = (tmp_path / "stderr.txt").read_text()
    saved = sample_lines(out)
    if signum != signal.SIGKILL:  # as Ctrl-C: what is saved, and the command that continues
        assert "Traceback" not in stderr, stderr
        assert process.returncode == 128 + signum, (process.returncode, stderr)
        lines = stderr.strip().splitlines()
        assert lines[-2].startswith(f"ragbench: stopped by {signum.name}: ") and lines[-2].endswith("continue with:"), (
            stderr
        )
        assert lines[-1].strip().endswith("--resume"), stderr
    killed_attempt = attempts(out)
    assert len(killed_attempt) == 1, f"the attempt was not recorded {where}"
    stopped_early = killed_attempt[0].get("interrupted", False)  # else stopped once its examples were done
    # a kill loses at most the last second of the attempt's cost
    before = max((lines for at, lines in history if at <= killed_at - 1.5), default=0)
    assert before <= killed_attempt[0]["examples"] <= saved, (killed_attempt, before, saved, where)
    assert killed_attempt[0]["llm_calls"] >= killed_attempt[0]["examples"], where

    results = finish(ragbench_zygote, [*args, "--resume"], env)
    ids = [json.loads(line)["id"] for line in (out / "samples" / "crag_t3.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == QUESTIONS, where  # every example exactly once
    assert comparable(results) == comparable(uninterrupted), where
    cost = results["cost"]
    assert cost["attempts"] == 2 and cost["interrupted_attempts"] == int(stopped_early), (cost, where)
    if signum == signal.SIGKILL:
        assert QUESTIONS - saved + before <= cost["examples"] <= QUESTIONS, (cost, where)
    else:  # stopped cleanly: the attempt's cost was saved as it stopped, to the call
        assert cost["examples"] == QUESTIONS, (cost, where)
        assert cost["llm_calls"] == uninterrupted["cost"]["llm_calls"], (cost, where)


def test_a_run_killed_before_its_first_example_finished_counts_its_calls(tmp_path, archive, ragbench_zygote):
    """Every model call has returned (one batch) and the judge's are still running: a kill -9 then loses
    none of the model calls from the run's cost."""
    out, env = tmp_path / "run", environment(tmp_path)
    args = command(archive, out, overhead=0.5, judge_overhead=3.0, inflight=QUESTIONS)
    process = start(args, env, tmp_path / "stderr.txt")
    deadline = time.monotonic() + 60
    while (
        not any(a.get("llm_calls", 0) >= QUESTIONS for a in attempts(out))
        and time.monotonic() < deadline
        and process.poll() is None
    ):
        time.sleep(0.05)
    process.kill()
    process.wait(timeout=60)
    assert sample_lines(out) == 0  # no example had finished
    recorded = attempts(out)
    assert len(recorded) == 1 and recorded[0]["llm_calls"] == QUESTIONS, recorded
    results = finish(ragbench_zygote, [*args, "--resume"], env)
    assert results["counts"]["crag_t3"]["scored"] == QUESTIONS
    cost = results["cost"]
    assert cost["attempts"] == 2 and cost["interrupted_attempts"] == 1
    assert cost["llm_calls"] == 2 * QUESTIONS  # the model's calls counted once: the resume's came from the cache


def test_a_kill_9_loses_none_of_the_saved_samples_calls_from_the_runs_cost(tmp_path, ragbench_zygote):
    """run.json's cost is saved each second, the samples as they finish: the samples saved since its last
    save carry their attempt's cost, which the resume counts, so every saved sample's call is counted once."""
    out, log = tmp_path / "run", tmp_path / "calls.log"
    env = {**environment(tmp_path), "RAGBENCH_TEST_CALL_LOG": str(log)}
    args = [
        *cli_run_args("scripted:support.logged_engine:answer"),
        "--model-arg",
        "per_request=0.1",
        "--max-inflight",
        "1",
        "--no-progress",
        "--bootstrap-iters",
        "0",
        "--output",
        str(out),
    ]
    process = start(args, env, tmp_path / "stderr.txt")
    samples = out / "samples" / "demo.jsonl"
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:  # samples saved that run.json does not count
        recorded, saved = attempts(out), samples.read_bytes().count(b"\n") if samples.is_file() else 0
        if recorded and saved >= 3 and saved > recorded[0].get("examples", 0):
            break
        time.sleep(0.01)
    process.kill()
    process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL, (tmp_path / "stderr.txt").read_text()
    results = finish(ragbench_zygote, [*args, "--resume"], env)
    cost = results["cost"]
    records = [json.loads(line) for line in samples.read_text().splitlines()]
    answered = sum(1 for record in records for step in record["trace"] if step["kind"] == "llm" and not step["cached"])
    made = log.read_text().count("call\n")  # every call the engine answered, in both processes
    assert (cost["attempts"], cost["interrupted_attempts"], cost["examples"]) == (2, 1, 24), cost
    assert answered <= cost["llm_calls"] <= made, (cost, answered, made)

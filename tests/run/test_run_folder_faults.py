"""One run per folder, and writes that survive: two runs on one folder (two real processes), a lock a
killed run left, one taken on a full disk or just after another run ended, a full disk (a small tmpfs, else an
injected ENOSPC) that a resume gets past once space is freed, a read-only run folder, files replaced whole or not at
all."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import write_jsonl
from ragbench.api import ConfigError
from ragbench.testing import run_eval
from support import paths
from support.helpers import cli_here, comparable, popqa_args, samples, tmpfs


def popqa(tmp_path, n: int, words: int = 0):
    return write_jsonl(
        tmp_path / "popqa.jsonl",
        [
            {
                "id": f"q{i}",
                "question": f"Who is {i}? " + "word " * words,
                "answers": [f"{i}?"],
                "ctxs": [{"id": "d", "title": "T", "text": "text " * words}],
            }
            for i in range(n)
        ],
    )


def run_args(data, out, *extra: str) -> list[str]:
    return popqa_args(data, out, "--no-progress", "--bootstrap-iters", "200", *extra)


def start(args: list[str], env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ragbench._cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def held_answer(request) -> str:
    """A scripted model that answers once the file $RAGBENCH_TEST_RELEASE exists: a run held mid-way."""
    release = Path(os.environ["RAGBENCH_TEST_RELEASE"])
    while not release.exists():
        time.sleep(0.02)
    return "answer"


def wait_for(condition, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def lock_holder(out) -> dict | None:
    try:
        return json.loads((out / "run.lock").read_text())
    except (OSError, ValueError):
        return None


def each_example_once(out, n: int) -> bool:
    return sorted(s["id"] for s in samples(out, "popqa")) == sorted(f"q{i}" for i in range(n))


# --- the lock ---------------------------------------------------------------------------------------


def test_a_second_run_or_resume_on_a_folder_in_use_is_refused_with_one_line(tmp_path):
    data, out, release = popqa(tmp_path, 24), tmp_path / "run", tmp_path / "release"
    env = {"RAGBENCH_TEST_RELEASE": str(release), "PYTHONPATH": paths.python_path(Path(__file__).parent)}
    held = ["--model", "scripted:test_run_folder_faults:held_answer", "--max-inflight", "2"]
    first = start(run_args(data, out, *held), env)  # held in its first batch until `release` exists
    wait_for(lambda: lock_holder(out) is not None)
    assert lock_holder(out)["pid"] == first.pid
    for extra in (["--resume"], ["--overwrite"], []):
        second = cli_here(*run_args(data, out, *held, *extra), env=env)
        assert second.returncode == 2, second.stderr
        [line] = second.stderr.splitlines()
        assert line.startswith(
            f"ragbench: error: --output {out}: another ragbench run is using this folder (pid {first.pid} on "
        ), line
    release.write_text("")
    _, stderr = first.communicate(timeout=120)
    assert first.returncode == 0, stderr
    results = json.loads((out / "results.json").read_text())
    counts = results["counts"]["popqa"]
    assert results["complete"] and (counts["records"], counts["scored"], counts["failed"]) == (24, 24, 0)
    assert each_example_once(out, 24) and not results.get("checkpoint_repairs")
    assert (out / "run.lock").read_text() == ""  # let go


def test_a_lock_a_killed_run_left_is_stale_and_the_resume_takes_it_over(tmp_path):
    data, out = popqa(tmp_path, 24), tmp_path / "run"
    args = run_args(data, out, "--model-arg", "overhead=0.5", "--model-arg", "batch_size=2", "--max-inflight", "2")
    first = start(args)
    wait_for(
        lambda: (
            (out / "samples" / "popqa.jsonl").is_file()
            and (out / "samples" / "popqa.jsonl").read_text().count("\n") >= 2
        )
    )
    os.kill(first.pid, signal.SIGKILL)
    first.communicate(timeout=30)
    assert lock_holder(out)["pid"] == first.pid  # the file stays; the kernel let go of the lock
    resumed = cli_here(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((out / "results.json").read_text())["complete"] and each_example_once(out, 24)


def popqa_run(tmp_path, data, name: str = "run", **config) -> dict:
    """results.json of a vanilla run of popqa on `data` into tmp_path/name, in this process."""
    return run_eval(
        "popqa", "vanilla", "scripted:echo", data=data, output=tmp_path / name, bootstrap_iters=200, **config
    ).results


def test_a_folder_held_in_this_process_refuses_a_run_and_is_free_once_the_run_returns(tmp_path):
    import fcntl

    data = popqa(tmp_path, 3)
    popqa_run(tmp_path, data)
    holder = (tmp_path / "run" / "run.lock").open("r")
    fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held as a run holds it
    with pytest.raises(ConfigError, match="another ragbench run is using this folder"):
        popqa_run(tmp_path, data, resume=True)
    holder.close()
    assert popqa_run(tmp_path, data, resume=True)["complete"]
    assert popqa_run(tmp_path, data, overwrite=True)["complete"]  # the resume let go when it returned


# --- a full disk --------------------------------------------------------------------------------------

INJECT_ENOSPC = """
import errno, sys, jsonlines
from ragbench.testing import cli as main
original, written = jsonlines.Writer.write, [0]
def write(self, obj):
    written[0] += 1
    if written[0] > 30:
        raise OSError(errno.ENOSPC, "No space left on device")
    return original(self, obj)
jsonlines.Writer.write = write
from ragbench._storage.jsonl import Appender, naming  # a sample's line is written as its text, not through jsonlines
original_text = Appender.write_text
def write_text(self, line):
    written[0] += 1
    if written[0] > 30:
        with naming(self.path):  # raised where the file is written, as the jsonlines writer's is
            raise OSError(errno.ENOSPC, "No space left on device")
    return original_text(self, line)
Appender.write_text = write_text
sys.argv[0] = "ragbench"
main()
"""


def fill(disk, leave: int):
    """A file taking all of `disk` but `leave` bytes."""
    stats = os.statvfs(disk)
    filler = disk / "filler"
    filler.write_bytes(b"\0" * (stats.f_bavail * stats.f_frsize - leave))
    return filler


@pytest.mark.parametrize("fault", ["tmpfs", "injected"])
def test_a_full_disk_ends_in_one_line_and_the_run_resumes_once_space_is_freed(tmp_path, fault):
    data = popqa(tmp_path, 200, words=60)
    reference = popqa_run(tmp_path, data, "reference")
    with tmpfs(tmp_path / "disk", size="4m") as disk:
        if fault == "tmpfs":  # a real full disk: a small tmpfs, filled but for 200 kB
            if disk is None:
                pytest.skip("mounting a tmpfs is not allowed here (the injected ENOSPC runs instead)")
            out = disk / "run"
            filler = fill(disk, leave=200_000)
            full = cli_here(*run_args(data, out))
            filler.unlink()  # space freed
        else:  # the 31st sample write fails as a full disk's would
            out = tmp_path / "run"
            full = subprocess.run(
                [sys.executable, "-c", INJECT_ENOSPC, *run_args(data, out)], capture_output=True, text=True, timeout=120
            )
        assert full.returncode == 1, full.stderr
        assert "Traceback" not in full.stderr
        last = full.stderr.strip().splitlines()[-1]
        assert last.startswith(f"ragbench: error: No space left on device: {out}/"), last
        assert last.endswith(
            "free space on that disk, then run the same command with --resume (what finished is saved)"
        )
        assert all(line.startswith("ragbench: warning:") for line in full.stderr.strip().splitlines()[:-1])
        assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
        resumed = cli_here(*run_args(data, out, "--resume"))
        assert resumed.returncode == 0, resumed.stderr
        results = json.loads((out / "results.json").read_text())
        assert comparable(results) == comparable(reference)
        assert each_example_once(out, 200)


# --- a run folder moved while the run writes it ---------------------------------------------------------


def moving_answer(request) -> str:
    """A scripted model that, asked about $RAGBENCH_TEST_MOVE_AT, moves the run folder $RAGBENCH_TEST_MOVE_FROM
    to $RAGBENCH_TEST_MOVE_TO (removes it where that is empty): a folder moved under a run at a known point."""
    folder = Path(os.environ.get("RAGBENCH_TEST_MOVE_FROM", "/nonexistent"))
    if f"Who is {os.environ.get('RAGBENCH_TEST_MOVE_AT')}?" in str(request.messages or request.prompt):
        if os.environ["RAGBENCH_TEST_MOVE_TO"]:
            folder.rename(os.environ["RAGBENCH_TEST_MOVE_TO"])
        elif folder.is_dir():
            shutil.rmtree(folder)
    return "answer"


MOVING = ["--model", "scripted:test_run_folder_faults:moving_answer", "--max-inflight", "1"]


@pytest.mark.parametrize("at", [0, 3])  # before the first sample is saved; after three are
def test_a_run_folder_moved_mid_run_ends_in_one_line_and_resumes_where_it_is_now(tmp_path, at):
    data, out, moved = popqa(tmp_path, 6), tmp_path / "runs" / "x", tmp_path / "moved"
    env = {
        "PYTHONPATH": paths.python_path(Path(__file__).parent),
        "RAGBENCH_TEST_MOVE_AT": str(at),
        "RAGBENCH_TEST_MOVE_FROM": str(out),
        "RAGBENCH_TEST_MOVE_TO": str(moved),
    }
    process = start(run_args(data, out, *MOVING), env)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1 and stderr.splitlines() == [
        f"ragbench: error: the run folder was moved or removed while the run wrote it: {out}; it is now {moved}, "
        f"then run the same command with --resume --output {moved} (what finished is saved there)"
    ], stderr
    assert not out.exists()
    saved = samples(moved, "popqa") if at else []  # the samples file, open when the folder moved, goes on there
    assert len(saved) >= at
    resumed = cli_here(*run_args(data, moved, *MOVING, "--resume"))
    assert resumed.returncode == 0, resumed.stderr
    clean = cli_here(*run_args(data, tmp_path / "clean", *MOVING))
    assert clean.returncode == 0, clean.stderr
    results, reference = (json.loads((folder / "results.json").read_text()) for folder in (moved, tmp_path / "clean"))
    assert comparable(results) == comparable(reference)
    assert each_example_once(moved, 6)


def test_a_run_folder_removed_mid_run_ends_in_one_line(tmp_path):
    data, out = popqa(tmp_path, 4), tmp_path / "runs" / "x"
    env = {
        "PYTHONPATH": paths.python_path(Path(__file__).parent),
        "RAGBENCH_TEST_MOVE_AT": "2",
        "RAGBENCH_TEST_MOVE_FROM": str(out),
        "RAGBENCH_TEST_MOVE_TO": "",
    }
    process = start(run_args(data, out, *MOVING), env)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1 and stderr.splitlines() == [
        f"ragbench: error: the run folder was moved or removed while the run wrote it: {out}; it was removed, or "
        "this system cannot say where it went, then run the same command with --resume --output set to where it "
        "is now, or run it again"
    ], stderr


# --- a read-only run folder -----------------------------------------------------------------------------


def test_a_read_only_output_ends_in_one_line_and_check_says_so(tmp_path):
    data = popqa(tmp_path, 3)
    with tmpfs(tmp_path / "ro", read_only=True) as ro:
        if ro is None:
            pytest.skip("mounting a tmpfs is not allowed here (the pre-flight's own test covers os.access)")
        out = ro / "run"
        expected = (
            f"ragbench: error: --output {out}: cannot write {ro} (read-only file system); choose a folder "
            "that can be written"
        )
        for command in (["check"], []):
            refused = cli_here(*command, *run_args(data, out))
            assert refused.returncode == 2 and refused.stderr.splitlines() == [expected], refused.stderr
            assert "ready to run" not in refused.stdout


def test_a_run_folder_that_became_read_only_refuses_the_resume_with_one_line(tmp_path):
    data = popqa(tmp_path, 3)
    with tmpfs(tmp_path / "disk") as disk:
        if disk is None:
            pytest.skip("mounting a tmpfs is not allowed here")
        out = disk / "run"
        assert cli_here(*run_args(data, out)).returncode == 0
        meta = json.loads((out / "run.json").read_text())
        (out / "run.json").write_text(json.dumps({**meta, "finished": False}))  # stopped before its end
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        refused = cli_here(*run_args(data, out, "--resume"))
        assert refused.returncode == 2
        assert refused.stderr.splitlines() == [
            f"ragbench: error: --output {out}: cannot write {out} (read-only file "
            "system); choose a folder that can be written"
        ]


def test_the_preflight_refuses_an_output_it_cannot_write(tmp_path, monkeypatch):
    data = popqa(tmp_path, 3)
    real_access = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda path, mode, **kw: (
            False
            if str(path).startswith(str(tmp_path / "locked")) and mode & os.W_OK
            else real_access(path, mode, **kw)
        ),
    )
    (tmp_path / "locked").mkdir()
    with pytest.raises(ConfigError, match=r"--output .*locked/run: cannot write .*locked \(no permission\)"):
        popqa_run(tmp_path / "locked", data)

"""Faults met by the commands over run folders (`rescore`, `compare --output`, `view --export`) and by a
run's damaged sample lines: each ends in one line naming what, where and the fix, never a traceback.
Real faults (a small tmpfs filled, a read-only tmpfs) where mounting is allowed, else injected ones."""
from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import cli, comparable, run, tmpfs

from test_reproduce import registry_with_demo_row, reproduce  # noqa: F401 (a fixture)
from test_run_folder_faults import fill, popqa, run_args

# The command with every file write failing as a full disk's would: whole-file writes (Path.write_text,
# as the viewer's export and compare write) and appends (jsonlines, as the samples are written).
INJECT_ENOSPC = """
import errno, pathlib, sys, jsonlines
from ragbench._cli.main import main
def full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")
pathlib.Path.write_text = pathlib.Path.write_bytes = jsonlines.Writer.write = full
sys.argv[0] = "ragbench"
main()
"""


@pytest.fixture
def finished(tmp_path):
    data = popqa(tmp_path, 6)
    assert cli(*run_args(data, tmp_path / "run")).returncode == 0
    return tmp_path / "run"


def on_a_full_disk(tmp_path, args: list[str], target: str) -> subprocess.CompletedProcess:
    """`ragbench ARGS` writing to `target` (a name) on a full disk: a tmpfs filled to the last 2 kB, else
    writes that fail. `{out}` in ARGS is the folder written."""
    with tmpfs(tmp_path / "disk", size="256k") as disk:
        if disk is not None:
            fill(disk, leave=2_000)
            return cli(*[a.format(out=disk / target) for a in args])
    return subprocess.run([sys.executable, "-c", INJECT_ENOSPC, *[a.format(out=tmp_path / target) for a in args]],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", [["view", "{run}", "--export", "{out}"],
                                     ["compare", "{run}", "{run}", "--output", "{out}"]], ids=["view", "compare"])
def test_an_export_or_comparison_on_a_full_disk_ends_in_one_line(tmp_path, finished, command):
    args = [a.replace("{run}", str(finished)) for a in command]
    full = on_a_full_disk(tmp_path, args, "written")
    assert full.returncode == 1, full.stderr
    assert "Traceback" not in full.stderr, full.stderr
    lines = full.stderr.strip().splitlines()
    assert lines[-1].startswith("ragbench: error: No space left on device: ") and "/written" in lines[-1], lines
    assert lines[-1].endswith("; free space on that disk, then run it again"), lines


@pytest.mark.parametrize("command", [["view", "{run}", "--export", "{out}"],
                                     ["compare", "{run}", "{run}", "--output", "{out}"]], ids=["view", "compare"])
def test_an_export_or_comparison_into_a_read_only_folder_is_refused_with_one_line(tmp_path, finished, command):
    with tmpfs(tmp_path / "ro", read_only=True) as ro:
        if ro is None:
            pytest.skip("mounting a tmpfs is not allowed here")
        out = ro / "written"
        refused = cli(*[a.replace("{run}", str(finished)).replace("{out}", str(out)) for a in command])
    option = "--export" if command[0] == "view" else "--output"
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.splitlines() == [f"ragbench: error: {command[0]} {option} {out}: cannot write {ro} "
                                           "(read-only file system); choose a folder that can be written"]


def test_a_rescore_stopped_by_a_full_disk_says_to_overwrite_and_that_completes_it(tmp_path, finished):
    with tmpfs(tmp_path / "disk", size="256k") as disk:
        if disk is not None:
            out = disk / "rescored"
            filler = fill(disk, leave=2_000)
            full = cli("rescore", str(finished), "--output", str(out))
            filler.unlink()
        else:
            out = tmp_path / "rescored"
            full = subprocess.run([sys.executable, "-c", INJECT_ENOSPC, "rescore", str(finished), "--output", str(out)],
                                  capture_output=True, text=True, timeout=120)
        assert full.returncode == 1 and "Traceback" not in full.stderr, full.stderr
        last = full.stderr.strip().splitlines()[-1]
        assert last.startswith(f"ragbench: error: No space left on device: {out}"), last
        assert last.endswith(f"free space on that disk, then run the same command with --overwrite ({finished} is "
                             "unchanged)"), last
        again = cli("rescore", str(finished), "--output", str(out), "--overwrite")
        assert again.returncode == 0, again.stderr
        rescored = json.loads((out / "results.json").read_text())
    assert comparable(rescored)["results"] == comparable(json.loads((finished / "results.json").read_text()))["results"]


# --- damaged files of a run folder ----------------------------------------------------------------------

@pytest.mark.parametrize("line", ['{"id": "q1"}', '{"id": "q1", "index": "2"}', '{"id": ["q1"], "index": null}'],
                         ids=["no-index", "text-index", "null-index"])
def test_a_sample_line_that_parses_but_is_no_sample_is_passed_over_and_run_again(tmp_path, line):
    """A damaged line can still be a JSON object: like a line cut short, it is passed over and counted,
    its example runs again, and the numbers are those of a run never damaged."""
    data = popqa(tmp_path, 6)
    reference = run(tmp_path, "reference", tasks=["popqa"], system="vanilla", model="scripted:echo",
                    data={"popqa": str(data)})
    out = tmp_path / "run"
    assert cli(*run_args(data, out)).returncode == 0
    sample_file = out / "samples" / "popqa.jsonl"
    kept = [json.loads(text) for text in sample_file.read_text().splitlines() if json.loads(text)["id"] != "q1"]
    sample_file.write_text("".join(json.dumps(record) + "\n" for record in kept) + line + "\n")
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, "finished": False}))  # stopped before its end
    for command in (["rescore", str(out), "--output", str(tmp_path / "rescored")], run_args(data, out, "--resume")):
        done = cli(*command)
        assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "results.json").read_text())
    assert comparable(results) == comparable(reference)
    assert sorted(json.loads(text)["id"] for text in sample_file.read_text().splitlines()) == [f"q{i}" for i in range(6)]
    exported = cli("view", str(out), "--export", str(tmp_path / "site"))
    assert exported.returncode == 0 and "Traceback" not in exported.stderr, exported.stderr


@pytest.mark.parametrize("damage", ["results-a-list", "run-json-a-number", "sample-line-no-index", "samples-a-folder"])
def test_the_viewer_shows_a_damaged_run_or_names_the_fault_in_one_line(tmp_path, finished, damage):
    sample_file = finished / "samples" / "popqa.jsonl"
    if damage == "results-a-list":
        (finished / "results.json").write_text("[1, 2]")
    elif damage == "run-json-a-number":  # and no results.json: the run is read from its run.json
        (finished / "run.json").write_text("7")
        (finished / "results.json").unlink()
    elif damage == "sample-line-no-index":
        with sample_file.open("a") as handle:
            handle.write('{"id": "q9", "index": "x"}\n')
    else:
        sample_file.unlink()
        sample_file.mkdir()
    exported = cli("view", str(finished), "--export", str(tmp_path / "site"))
    assert "Traceback" not in exported.stderr, exported.stderr
    if damage == "samples-a-folder":
        assert exported.returncode == 1
        assert exported.stderr.splitlines() == [f"ragbench: error: Is a directory: {sample_file}; fix what the error "
                                                "names, then run it again"]
    else:
        assert exported.returncode == 0, exported.stderr
        runs = (tmp_path / "site" / "data" / "runs.js").read_text()
        assert ('"state": "stopped"' in runs) == (damage != "sample-line-no-index"), runs


def test_a_lock_that_cannot_be_recorded_on_a_full_disk_names_its_file_and_is_let_go(tmp_path):
    from ragbench._storage.run_lock import RunLock

    with tmpfs(tmp_path / "disk", size="64k") as disk:
        if disk is None:
            pytest.skip("mounting a tmpfs is not allowed here")
        (disk / "run").mkdir()
        filler = fill(disk, leave=0)
        with pytest.raises(OSError) as caught:
            RunLock(disk / "run").acquire()
        assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(disk / "run" / "run.lock")
        filler.unlink()
        again = RunLock(disk / "run")
        again.acquire()  # not held by the failed attempt's descriptor
        again.release()


def test_a_run_that_waited_for_the_lock_sees_the_run_that_ended_meanwhile(tmp_path):
    """Two runs start on one new folder at once: the second finds it empty, and the first takes the lock
    just before the second does and ends while the second tries again (a probe's instant). Once the
    second holds the lock it finds the first run there and is refused, never appending to it."""
    import threading

    from ragbench._errors import ConfigError
    from ragbench._storage.rundir import RunDir

    folder = tmp_path / "run"
    first, second = RunDir(folder), RunDir(folder)
    take_lock = second.lock.acquire

    def first_runs_meanwhile():
        first.start({}, {"a": 1}, "h", resume=False)
        ended = threading.Timer(0.05, lambda: (first.finish({"counts": {}}, "report"), first.lock.release()))
        ended.start()
        take_lock()  # tries again until the first run lets go
        ended.join()

    second.lock.acquire = first_runs_meanwhile
    with pytest.raises(ConfigError, match="already holds a run"):
        second.start({}, {"a": 1}, "h", resume=False)
    second.lock.release()
    assert json.loads((folder / "run.json").read_text())["finished"] is True


@pytest.mark.parametrize("command", [[], ["check"]], ids=["run", "check"])
def test_a_data_file_that_is_a_pipe_is_refused_at_once_instead_of_waiting_for_a_writer(tmp_path, command):
    fifo = tmp_path / "popqa.jsonl"
    os.mkfifo(fifo)
    refused = cli(*command, *run_args(fifo, tmp_path / "run"), timeout=60)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.splitlines() == [f"ragbench: error: --data popqa={fifo}: not a file or folder (a pipe or "
                                           "device); a run opens its data more than once: save it to a file"]
    assert not (tmp_path / "run").exists()


# --- signals ------------------------------------------------------------------------------------------

SIGNAL_IN_A_FINALIZER = """
import gc, os, signal, sys, time, weakref
from ragbench._run.lifecycle import exit_when_stuck, signal_of

class Thing:
    pass

def finalizer(_):  # the signal's handler runs here, where an exception is printed and dropped
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    for _ in range(10_000):
        pass

try:
    with exit_when_stuck(lambda signum: "stuck\\n", grace=30):
        thing = Thing()
        reference = weakref.ref(thing, finalizer)
        del thing
        for _ in range(200):
            time.sleep(0.01)
        print("went on")
except KeyboardInterrupt as exc:
    print("stopped by", signal.Signals(signal_of(exc)).name)
"""


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_stop_signal_that_lands_in_a_finalizer_still_stops_the_command_without_a_traceback(name):
    """A handler's exception raised inside a weakref callback or __del__ is printed ("Exception ignored
    in ...") and dropped by Python; the signal is sent again, so the command stops where it stands."""
    done = subprocess.run([sys.executable, "-c", SIGNAL_IN_A_FINALIZER, name], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == f"stopped by {name}", (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr


def test_a_file_that_cannot_be_replaced_is_named_not_its_temporary_file(tmp_path):
    data = popqa(tmp_path, 3)
    out = tmp_path / "run"
    assert cli(*run_args(data, out)).returncode == 0
    (out / "results.json").unlink()
    (out / "results.json").mkdir()  # what was results.json is a folder now
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, "finished": False}))
    failed = cli(*run_args(data, out, "--resume"))
    assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr
    assert failed.stderr.strip().splitlines()[-1] == (
        f"ragbench: error: Is a directory: {out}/results.json; fix what the error names, then run the same command "
        "with --resume (what finished is saved)")
    assert not list(out.glob(".*.tmp"))


@pytest.mark.parametrize("damage", ["cut-short", "a-list", "an-empty-object"])
@pytest.mark.parametrize("command", ["rescore", "compare"])
def test_a_damaged_results_json_is_named_with_the_resume_that_rebuilds_it(tmp_path, damage, command):
    data = popqa(tmp_path, 4)
    out = tmp_path / "run"
    assert cli(*run_args(data, out)).returncode == 0
    whole = (out / "results.json").read_text()
    (out / "results.json").write_text({"cut-short": whole[:100], "a-list": "[1, 2]", "an-empty-object": "{}"}[damage])
    args = ["rescore", str(out), "--output", str(tmp_path / "rescored")] if command == "rescore" else \
        ["compare", str(out), str(out)]
    refused = cli(*args)
    assert refused.returncode == 2, refused.stderr
    [line] = refused.stderr.splitlines()
    assert line.startswith("ragbench: error: ") and f"{out}/results.json" in line, line
    assert line.endswith(f"`ragbench ... --resume --output {out}` (the options it was run with) rebuilds it from the "
                         "samples"), line
    assert cli(*run_args(data, out, "--resume")).returncode == 0  # as the line says
    assert cli(*args).returncode == 0


SECOND_SIGNAL_WHILE_CLEANING_UP = """
import asyncio, gc, os, signal, threading
from ragbench._run.lifecycle import Stopped, run_interruptible

async def a_run():
    helper = asyncio.get_running_loop().create_task(asyncio.sleep(60))  # e.g. a scheduler's dispatcher
    try:
        await asyncio.sleep(60)
    finally:  # cancelled by the first signal; the second comes while it cleans up (`timeout` sends two)
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.to_thread(sum, [1, 2])
        helper.cancel()

threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
try:
    run_interruptible(a_run())
except Stopped as exc:
    print("stopped by", exc)
gc.collect()
"""


def test_a_second_signal_while_a_stopped_run_cleans_up_leaves_no_asyncio_report():
    done = subprocess.run([sys.executable, "-c", SECOND_SIGNAL_WHILE_CLEANING_UP], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "stopped by SIGTERM", (done.stdout, done.stderr)
    assert done.stderr == "", done.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_a_rescore_stopped_by_a_signal_says_so_in_one_line_and_overwrite_completes_it(tmp_path, finished, signum):
    out = tmp_path / "rescored"
    args = ["rescore", str(finished), "--metrics", "+llm_judge", "--judge", "scripted:echo", "--judge-arg",
            "0.overhead=0.2", "--max-inflight", "1", "--output", str(out)]
    process = subprocess.Popen([sys.executable, "-m", "ragbench._cli.main", *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list((out / "samples").glob("*.jsonl")) or not (out / "samples" / "popqa.jsonl").stat().st_size:
        assert time.monotonic() < deadline and process.poll() is None, process.stderr.read()
        time.sleep(0.02)
    process.send_signal(signum)
    stderr = process.communicate(timeout=60)[1]
    how = "interrupted" if signum == signal.SIGINT else f"stopped by {signum.name}"
    assert process.returncode == 128 + signum, stderr
    assert stderr.strip().splitlines() == [f"ragbench rescore: {how}; {finished} is unchanged, the rescored folder is "
                                           "unfinished (run the same command with --overwrite)"]
    assert cli(*args, "--overwrite").returncode == 0


def test_a_reproduction_whose_record_cannot_be_written_ends_in_one_line_and_resumes(
        registry_with_demo_row, tmp_path, monkeypatch):
    """The run finished; adding the paper's numbers to results.json and report.md meets a full disk (a write
    that fails: a real disk full at exactly this moment cannot be arranged)."""
    import ragbench._storage.files as files

    out = tmp_path / "run"

    def full(path, text):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    with monkeypatch.context() as patched:
        patched.setattr(files, "write_atomically", full)  # as `reproduce` imports it (the run's own writes not)
        failed = reproduce("demo.closed-book", "--output", str(out), "--no-progress")
    assert failed.exit_code == 1 and not isinstance(failed.exception, OSError), failed.output
    assert failed.output.strip().splitlines()[-1] == (
        f"ragbench: error: No space left on device: {out}/results.json; free space on that disk, then run the same "
        "command with --resume (what finished is saved)")
    resumed = reproduce("demo.closed-book", "--output", str(out), "--no-progress", "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads((out / "results.json").read_text())["reproduction"]["cells"][0]["ours"] == 50.0
    assert (out / "report.md").read_text().count("## Reproduction: demo.closed-book") == 1


def test_an_unfinished_reproduction_continues_with_resume_and_a_finished_one_keeps_one_record(registry_with_demo_row, tmp_path):
    out = tmp_path / "run"
    first = reproduce("demo.closed-book", "--output", str(out), "--no-progress", "--limit", "4")
    assert first.exit_code == 0, first.output
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, "finished": False}))  # as a killed run leaves it
    again = reproduce("demo.closed-book", "--output", str(out), "--no-progress", "--limit", "4")
    assert again.exit_code == 2 and "--resume continues it" in again.output, again.output
    for _ in range(2):  # and a finished one resumed again keeps one record of the reproduction
        resumed = reproduce("demo.closed-book", "--output", str(out), "--no-progress", "--limit", "4", "--resume")
        assert resumed.exit_code == 0, resumed.output
    assert (out / "report.md").read_text().count("## Reproduction: demo.closed-book") == 1
    assert reproduce("demo.closed-book", "--output", str(out), "--no-progress", "--overwrite").exit_code == 0


def test_a_score_stopped_by_a_signal_continues_with_the_command_its_line_names(tmp_path):
    """`ragbench score` stopped by SIGTERM names `... --resume`; that command takes it and completes the run
    with the numbers of a score never stopped."""
    data = popqa(tmp_path, 6)
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"id": f"q{i}", "output": f"{i}?"}) + "\n" for i in range(6)))
    args = ["score", "--task", "popqa", "--data", str(data), "--predictions", str(predictions), "--metrics",
            "+llm_judge", "--judge", "scripted:echo", "--judge-arg", "0.overhead=0.3", "--max-inflight", "1",
            "--bootstrap-iters", "50", "--no-progress"]
    assert cli(*args, "--output", str(tmp_path / "whole")).returncode == 0
    out = tmp_path / "stopped"
    process = subprocess.Popen([sys.executable, "-m", "ragbench._cli.main", *args, "--output", str(out)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (out / "samples" / "popqa.jsonl").is_file() or not (out / "samples" / "popqa.jsonl").stat().st_size:
        assert time.monotonic() < deadline and process.poll() is None, process.stderr.read()
        time.sleep(0.02)
    process.send_signal(signal.SIGTERM)
    stderr = process.communicate(timeout=60)[1]
    assert process.returncode == 128 + signal.SIGTERM and "Traceback" not in stderr, stderr
    command = stderr.strip().splitlines()[-1].split()
    assert command[:2] == ["ragbench", "score"] and command[-1] == "--resume", stderr
    resumed = cli(*command[1:])
    assert resumed.returncode == 0, resumed.stderr
    assert comparable(json.loads((out / "results.json").read_text())) == \
        comparable(json.loads((tmp_path / "whole" / "results.json").read_text()))


def test_a_stopped_replay_continues_with_resume_and_is_replaced_with_overwrite(tmp_path, finished):
    out = tmp_path / "replayed"
    assert cli("--replay", str(finished), "--output", str(out), "--no-progress").returncode == 0
    sample_file = out / "samples" / "popqa.jsonl"
    sample_file.write_text("".join(sample_file.read_text().splitlines(keepends=True)[:2]))  # stopped after 2
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, "finished": False}))
    (out / "results.json").unlink()
    resumed = cli("--replay", str(finished), "--output", str(out), "--no-progress", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert comparable(json.loads((out / "results.json").read_text())) == \
        comparable(json.loads((finished / "results.json").read_text()))
    assert cli("--replay", str(finished), "--output", str(out), "--no-progress", "--overwrite").returncode == 0


# --- ragbench index build ---------------------------------------------------------------------------------

CORPUS = Path(__file__).parent / "data" / "open_qa" / "varn_corpus.jsonl"


def test_an_index_built_on_a_full_disk_ends_in_one_line_leaves_nothing_and_builds_once_space_is_freed(tmp_path):
    with tmpfs(tmp_path / "disk", size="256k") as disk:
        if disk is None:
            pytest.skip("mounting a tmpfs is not allowed here")
        out = disk / "index"
        filler = fill(disk, leave=2_000)
        full = cli("index", "build", "--corpus", str(CORPUS), "--retriever", "bm25", "--out", str(out), "--no-progress")
        assert full.returncode == 1 and "Traceback" not in full.stderr, full.stderr
        assert full.stderr.strip().splitlines()[-1] == (f"ragbench: error: No space left on device: {out}.partial; "
                                                        "free space on that disk, then run it again")
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]
        filler.unlink()
        again = cli("index", "build", "--corpus", str(CORPUS), "--retriever", "bm25", "--out", str(out))
        assert again.returncode == 0, again.stderr


def test_an_index_into_a_read_only_folder_is_refused_with_one_line(tmp_path):
    with tmpfs(tmp_path / "ro", read_only=True) as ro:
        if ro is None:
            pytest.skip("mounting a tmpfs is not allowed here")
        refused = cli("index", "build", "--corpus", str(CORPUS), "--retriever", "bm25", "--out", str(ro / "index"))
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.splitlines() == [f"ragbench: error: --out {ro}/index: cannot write {ro} (read-only file "
                                           "system); choose a folder that can be written"]


def test_the_temporary_files_of_a_run_killed_while_replacing_a_file_go_with_its_resume(tmp_path):
    data = popqa(tmp_path, 3)
    out = tmp_path / "run"
    assert cli(*run_args(data, out)).returncode == 0
    stale = [out / ".results.json.0badf00d.tmp", out / "samples" / ".popqa.jsonl.deadbeef.tmp",
             out / "calls" / ".tools.json.12345678.tmp"]  # what a kill -9 inside `replacing` leaves
    for path in stale:
        path.write_text("half written")
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, "finished": False}))
    assert cli(*run_args(data, out, "--resume")).returncode == 0
    assert not [path for path in stale if path.exists()]

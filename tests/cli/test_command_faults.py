"""Faults met by the commands beside a run (`rescore`, `compare --output`, `view --export`, `reproduce`,
`score`, `--replay`, `index build`): a full disk, a read-only folder, a stop; each ends in one line
naming what, where and the fix, never a traceback, and the command it names continues. Real faults (a
small tmpfs filled, a read-only tmpfs) where mounting is allowed, else injected ones."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time

import pytest
from test_reproduce import registry_with_demo_row, reproduce  # noqa: F401 (a fixture)
from test_run_folder_faults import fill, popqa, run_args

from support import paths
from support.helpers import cli_here, comparable, score_args, tmpfs

# The command with every file write failing as a full disk's would: whole-file writes (Path.write_text,
# as the viewer's export and compare write) and appends (jsonlines, as the samples are written).
INJECT_ENOSPC = """
import errno, pathlib, sys, jsonlines
from ragbench.testing import cli as main
def full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")
pathlib.Path.write_text = pathlib.Path.write_bytes = jsonlines.Writer.write = full
sys.argv[0] = "ragbench"
main()
"""


@pytest.fixture
def finished(tmp_path):
    data = popqa(tmp_path, 6)
    assert cli_here(*run_args(data, tmp_path / "run")).returncode == 0
    return tmp_path / "run"


def on_a_full_disk(tmp_path, args: list[str], target: str) -> subprocess.CompletedProcess:
    """`ragbench ARGS` writing to `target` (a name) on a full disk: a tmpfs filled to the last 2 kB, else
    writes that fail. `{out}` in ARGS is the folder written."""
    with tmpfs(tmp_path / "disk", size="256k") as disk:
        if disk is not None:
            fill(disk, leave=2_000)
            return cli_here(*[a.format(out=disk / target) for a in args])
    return subprocess.run(
        [sys.executable, "-c", INJECT_ENOSPC, *[a.format(out=tmp_path / target) for a in args]],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "command",
    [["view", "{run}", "--export", "{out}"], ["compare", "{run}", "{run}", "--output", "{out}"]],
    ids=["view", "compare"],
)
def test_an_export_or_comparison_on_a_full_disk_ends_in_one_line(tmp_path, finished, command):
    args = [a.replace("{run}", str(finished)) for a in command]
    full = on_a_full_disk(tmp_path, args, "written")
    assert full.returncode == 1, full.stderr
    assert "Traceback" not in full.stderr, full.stderr
    lines = full.stderr.strip().splitlines()
    assert lines[-1].startswith("ragbench: error: No space left on device: ") and "/written" in lines[-1], lines
    assert lines[-1].endswith("; free space on that disk, then run it again"), lines


@pytest.mark.parametrize(
    "command",
    [["view", "{run}", "--export", "{out}"], ["compare", "{run}", "{run}", "--output", "{out}"]],
    ids=["view", "compare"],
)
def test_an_export_or_comparison_into_a_read_only_folder_is_refused_with_one_line(tmp_path, finished, command):
    with tmpfs(tmp_path / "ro", read_only=True) as ro:
        if ro is None:
            pytest.skip("mounting a tmpfs is not allowed here")
        out = ro / "written"
        refused = cli_here(*[a.replace("{run}", str(finished)).replace("{out}", str(out)) for a in command])
    option = "--export" if command[0] == "view" else "--output"
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.splitlines() == [
        f"ragbench: error: {command[0]} {option} {out}: cannot write {ro} "
        "(read-only file system); choose a folder that can be written"
    ]


def test_a_rescore_stopped_by_a_full_disk_says_to_overwrite_and_that_completes_it(tmp_path, finished):
    with tmpfs(tmp_path / "disk", size="256k") as disk:
        if disk is not None:
            out = disk / "rescored"
            filler = fill(disk, leave=2_000)
            full = cli_here("rescore", str(finished), "--output", str(out))
            filler.unlink()
        else:
            out = tmp_path / "rescored"
            full = subprocess.run(
                [sys.executable, "-c", INJECT_ENOSPC, "rescore", str(finished), "--output", str(out)],
                capture_output=True,
                text=True,
                timeout=120,
            )
        assert full.returncode == 1 and "Traceback" not in full.stderr, full.stderr
        last = full.stderr.strip().splitlines()[-1]
        assert last.startswith(f"ragbench: error: No space left on device: {out}"), last
        assert last.endswith(
            f"free space on that disk, then run the same command with --overwrite ({finished} is unchanged)"
        ), last
        again = cli_here("rescore", str(finished), "--output", str(out), "--overwrite")
        assert again.returncode == 0, again.stderr
        rescored = json.loads((out / "results.json").read_text())
    assert comparable(rescored)["results"] == comparable(json.loads((finished / "results.json").read_text()))["results"]


def test_an_unfinished_reproduction_continues_with_resume_and_a_finished_one_keeps_one_record(reproduce, tmp_path):
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
    args = [
        *score_args("popqa", data, predictions),
        "--metrics",
        "+llm_judge",
        "--judge",
        "scripted:echo",
        "--judge-arg",
        "0.overhead=0.3",
        "--max-inflight",
        "1",
        "--bootstrap-iters",
        "50",
        "--no-progress",
    ]
    assert cli_here(*args, "--output", str(tmp_path / "whole")).returncode == 0
    out = tmp_path / "stopped"
    process = subprocess.Popen(
        [sys.executable, "-m", "ragbench._cli.main", *args, "--output", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (out / "samples" / "popqa.jsonl").is_file() or not (out / "samples" / "popqa.jsonl").stat().st_size:
        assert time.monotonic() < deadline and process.poll() is None, process.stderr.read()
        time.sleep(0.02)
    process.send_signal(signal.SIGTERM)
    stderr = process.communicate(timeout=60)[1]
    assert process.returncode == 128 + signal.SIGTERM and "Traceback" not in stderr, stderr
    command = stderr.strip().splitlines()[-1].split()
    assert command[:2] == ["ragbench", "score"] and command[-1] == "--resume", stderr
    resumed = cli_here(*command[1:])
    assert resumed.returncode == 0, resumed.stderr
    assert comparable(json.loads((out / "results.json").read_text())) == comparable(
        json.loads((tmp_path / "whole" / "results.json").read_text())
    )


def test_a_stopped_replay_continues_with_resume_and_is_replaced_with_overwrite(tmp_path, finished):
    out = tmp_path / "replayed"
    assert cli_here("--replay", str(finished), "--output", str(out), "--no-progress").returncode == 0
    sample_file = out / "samples" / "popqa.jsonl"
    sample_file.write_text("".join(sample_file.read_text().splitlines(keepends=True)[:2]))  # stopped after 2
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, "finished": False}))
    (out / "results.json").unlink()
    resumed = cli_here("--replay", str(finished), "--output", str(out), "--no-progress", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert comparable(json.loads((out / "results.json").read_text())) == comparable(
        json.loads((finished / "results.json").read_text())
    )
    assert cli_here("--replay", str(finished), "--output", str(out), "--no-progress", "--overwrite").returncode == 0


# --- ragbench index build ---------------------------------------------------------------------------------

CORPUS = paths.DATA / "open_qa" / "varn_corpus.jsonl"


def test_an_index_built_on_a_full_disk_ends_in_one_line_leaves_nothing_and_builds_once_space_is_freed(tmp_path):
    with tmpfs(tmp_path / "disk", size="256k") as disk:
        if disk is None:
            pytest.skip("mounting a tmpfs is not allowed here")
        out = disk / "index"
        filler = fill(disk, leave=2_000)
        full = cli_here(
            "index", "build", "--corpus", str(CORPUS), "--retriever", "bm25", "--out", str(out), "--no-progress"
        )
        assert full.returncode == 1 and "Traceback" not in full.stderr, full.stderr
        assert full.stderr.strip().splitlines()[-1] == (
            f"ragbench: error: No space left on device: {out}.partial; free space on that disk, then run it again"
        )
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]
        filler.unlink()
        again = cli_here("index", "build", "--corpus", str(CORPUS), "--retriever", "bm25", "--out", str(out))
        assert again.returncode == 0, again.stderr


def test_an_index_into_a_read_only_folder_is_refused_with_one_line(tmp_path):
    with tmpfs(tmp_path / "ro", read_only=True) as ro:
        if ro is None:
            pytest.skip("mounting a tmpfs is not allowed here")
        refused = cli_here("index", "build", "--corpus", str(CORPUS), "--retriever", "bm25", "--out", str(ro / "index"))
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.splitlines() == [
        f"ragbench: error: --out {ro}/index: cannot write {ro} (read-only file "
        "system); choose a folder that can be written"
    ]


def test_a_corpus_written_on_a_full_disk_or_into_a_read_only_folder_ends_in_one_line(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("word " * 20_000)
    with tmpfs(tmp_path / "disk", size="64k") as disk, tmpfs(tmp_path / "ro", read_only=True) as ro:
        if disk is None or ro is None:
            pytest.skip("mounting a tmpfs is not allowed here")
        fill(disk, leave=4_000)
        full = cli_here("index", "omnieval-corpus", "--docs", str(docs), "--out", str(disk / "corpus.jsonl"))
        refused = cli_here("index", "omnieval-corpus", "--docs", str(docs), "--out", str(ro / "corpus.jsonl"))
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]  # no partial corpus stays
    assert full.returncode == 1 and "Traceback" not in full.stderr, full.stderr
    assert full.stderr.strip().splitlines()[-1].startswith("ragbench: error: No space left on device: "), full.stderr
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
    # the corpus is written under a name of its own beside --out (never a user's OUT.partial), then renamed
    assert re.fullmatch(
        f"ragbench: error: Read-only file system: {re.escape(str(ro))}/\\.corpus\\.jsonl\\.[0-9a-f]+\\.tmp; "
        "make it writable, or point --out elsewhere, then run it again",
        refused.stderr.strip().splitlines()[-1],
    ), refused.stderr

"""A run's files reach the disk before it says they are there (each replaced file flushed, then its folder), unless
`$RAGBENCH_FSYNC=off` says the run may lose its last writes to a power cut (scratch storage, a test suite): then
nothing is flushed and the run still writes its files."""

from __future__ import annotations

import os

from ragbench.testing import run_eval


def run_counting_flushes(tmp_path, monkeypatch, name: str) -> tuple[int, dict[str, bytes]]:
    flushes = []
    fsync = os.fsync

    def counted(descriptor: int) -> None:
        flushes.append(descriptor)
        fsync(descriptor)

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", counted)  # the os module ragbench's file writing calls
        run_eval("demo", "vanilla", "scripted:echo", limit=2, output=tmp_path / name, bootstrap_iters=10)
    kept = ("results.json", "report.md")
    return len(flushes), {file: (tmp_path / name / file).read_bytes() for file in kept}


def test_a_run_flushes_its_files_unless_told_it_may_lose_them_and_writes_them_either_way(tmp_path, monkeypatch):
    monkeypatch.delenv("RAGBENCH_FSYNC", raising=False)  # a user's run: the suite's own setting is off
    flushed, written = run_counting_flushes(tmp_path, monkeypatch, "default")
    assert flushed >= 4  # run.json, results.json, report.md, each file and its folder
    monkeypatch.setenv("RAGBENCH_FSYNC", "off")
    unflushed, written_unflushed = run_counting_flushes(tmp_path, monkeypatch, "off")
    assert unflushed == 0
    assert written_unflushed.keys() == written.keys() and all(written_unflushed.values())
    monkeypatch.setenv("RAGBENCH_FSYNC", "On")  # on, in any case: flushed
    assert run_counting_flushes(tmp_path, monkeypatch, "on")[0] == flushed

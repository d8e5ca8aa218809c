"""`ragbench check` reports the free space where the run writes and warns, in one line, when it is short."""

from __future__ import annotations

import shutil
from collections import namedtuple

from click.testing import CliRunner

from ragbench.testing import cli
from support import paths
from support.helpers import cli_run_args, tmpfs

Usage = namedtuple("Usage", "total used free")


def check(output, *extra):
    return CliRunner().invoke(
        cli,
        [
            "check",
            *cli_run_args("scripted:echo"),
            "--output",
            str(output),
            *extra,
        ],
    )


def test_a_file_system_short_of_space_is_one_warning_naming_it_and_the_run_can_still_start(tmp_path, monkeypatch):
    with tmpfs(tmp_path / "small", size="1m") as mounted:
        if mounted is None:  # mounting not allowed here: the same file system, told it has 1 MiB free
            real = shutil.disk_usage
            monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(real(path).total, 0, 2**20))
        result = check(tmp_path / "small" / "run", "--limit", "3")
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning")]
    assert warnings == [
        f"warning  --output {tmp_path / 'small' / 'run'}: 1 MiB free on its file system, less than "
        "the run may write (100 MiB: 3 record(s) x 64 KiB, at least 100 MiB); free space there, or "
        "choose another place (a full disk stops the run, which --resume continues)"
    ]
    assert "can run, with 1 warning(s) above" in result.output


def test_enough_free_space_is_reported_with_the_figure(tmp_path, monkeypatch):
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(real(path).total, 0, 5 * 2**30))
    result = check(tmp_path / "run")
    assert result.exit_code == 0, result.output
    assert (
        f"ok  --output {tmp_path / 'run'}: 5,120 MiB free on its file system (the run may write 100 MiB)"
        in result.output.splitlines()
    )
    assert "ready to run" in result.output


def test_the_estimate_grows_with_the_records_the_run_reads(tmp_path, monkeypatch):
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(real(path).total, 0, 110 * 2**20))
    assert "ready to run" in check(tmp_path / "run").output  # 24 records: 100 MiB at least, and 110 MiB are free
    demo = (paths.REPO / "tasks" / "selfrag" / "data" / "demo_qa.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "many.jsonl").write_text("".join((demo * (2048 // len(demo) + 1))[:2048]))
    result = check(tmp_path / "run", "--data", f"demo={tmp_path / 'many.jsonl'}")
    assert "less than the run may write (128 MiB: 2048 record(s) x 64 KiB, at least 100 MiB)" in result.output

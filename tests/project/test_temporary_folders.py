"""The suite's temporary folders (tests/support/temporary_folders.py): a passing test's `tmp_path` is gone as soon
as the test ends, a failing one's stays to be looked at. Run as an inner pytest session, with the plugin the suite
uses: kept until the session ended, the suite's folders outgrew a CI machine's disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TESTS_FOLDER = Path(__file__).resolve().parents[1]  # where `support` is imported from

INNER_TESTS = """
import json, os
from pathlib import Path

def record(tmp_path, name):
    (tmp_path / "written.bin").write_bytes(b"x" * 4096)
    with open(os.environ["FOLDERS_SEEN"], "a") as seen:
        seen.write(json.dumps([name, str(tmp_path)]) + "\\n")

def folder_of(name):
    lines = Path(os.environ["FOLDERS_SEEN"]).read_text().splitlines()
    return Path(dict(json.loads(line) for line in lines)[name])

def test_passes(tmp_path):
    record(tmp_path, "passes")

def test_fails(tmp_path):
    record(tmp_path, "fails")
    assert False

def test_later(tmp_path):
    record(tmp_path, "later")
    assert not folder_of("passes").exists(), "the passing test's folder outlived it"
    assert folder_of("fails").exists(), "the failing test's folder was removed"
"""


def test_a_passing_tests_folder_goes_as_it_ends_and_a_failing_ones_stays(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    seen = tmp_path / "seen.jsonl"
    monkeypatch.setenv("FOLDERS_SEEN", str(seen))
    monkeypatch.setenv("PYTHONPATH", str(TESTS_FOLDER))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the inner session needs none of the installed ones
    pytester.makepyfile(test_inner=INNER_TESTS)
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest_subprocess(
        "-p", "support.temporary_folders", "-p", "no:cacheprovider", "-p", "no:xdist"
    )
    result.assert_outcomes(passed=2, failed=1)
    folders = dict(json.loads(line) for line in seen.read_text().splitlines())
    assert set(folders) == {"passes", "fails", "later"}
    assert not Path(folders["passes"]).exists() and not Path(folders["later"]).exists()
    assert (Path(folders["fails"]) / "written.bin").exists()

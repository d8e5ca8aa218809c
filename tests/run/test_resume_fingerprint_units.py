"""The data fingerprint a finished run's --resume compares (ragbench._storage.datafiles), a unit with no public
face: of a folder, it follows the size and time of each file under it (tests/run/test_resume_finished_inputs.py
tests what a resume does with it)."""

from __future__ import annotations

import os

from ragbench._storage.datafiles import stat_fingerprint


def test_the_data_fingerprint_of_a_folder_follows_the_size_and_time_of_each_file_under_it(tmp_path):
    folder = tmp_path / "data"
    (folder / "a").mkdir(parents=True)
    (folder / "a" / "x.jsonl").write_text("{}\n")
    (folder / "y.jsonl").write_text("{}\n")
    before = stat_fingerprint(folder)
    assert before["files"] == 2 and stat_fingerprint(folder) == before
    os.utime(folder / "a" / "x.jsonl", ns=(1, 1))  # a copy over it keeping size: the time tells
    assert stat_fingerprint(folder) != before
    assert stat_fingerprint(tmp_path / "nowhere") == {"path": str(tmp_path / "nowhere"), "missing": True}

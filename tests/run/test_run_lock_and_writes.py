"""The run lock and the whole-file writes of a run folder (ragbench._storage.run_lock, .files, .rundir), units with
no public face: a lock probed at the instant a run starts it, one that cannot be recorded on a full disk, a run that
waited for the lock finding the run that ended meanwhile, files replaced whole or not at all.
tests/run/test_run_folder_faults.py tests what a run and the command line do with a folder in use, a full disk, a
folder moved or read-only."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from test_run_folder_faults import fill

from ragbench._storage.files import replacing, write_all_atomically
from support.helpers import tmpfs


def test_a_run_starting_while_the_lock_is_probed_is_not_turned_away(tmp_path):
    import fcntl
    import threading

    from ragbench._storage.run_lock import RunLock

    (tmp_path / "run.lock").write_text(json.dumps({"pid": 1, "host": "elsewhere"}))  # as a killed run leaves it
    probe = (tmp_path / "run.lock").open("r")
    fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)  # a viewer's or `check`'s probe, caught at its instant
    threading.Timer(0.05, probe.close).start()
    starting = RunLock(tmp_path)
    starting.acquire()
    assert starting.held and json.loads((tmp_path / "run.lock").read_text())["pid"] == os.getpid()
    starting.release()


def test_a_file_replaced_in_place_is_whole_or_as_it_was(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("old")
    with pytest.raises(OSError) as caught:
        with replacing(path) as handle:
            handle.write(b"new, half written")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert caught.value.filename == str(path)
    assert path.read_text() == "old" and list(tmp_path.iterdir()) == [path]
    with replacing(path) as handle:
        handle.write(b"new")
    assert path.read_text() == "new" and list(tmp_path.iterdir()) == [path]


def test_files_replaced_together_are_each_whole_or_as_they_were_and_their_folder_synced_once_after(
    tmp_path, monkeypatch
):
    """results.json and report.md are replaced together: each file flushed before its rename, the folder once
    after the renames made (one wait for the disk, not two), even when a later file fails (a real fault: a
    folder where the file goes), which is left as it was."""
    monkeypatch.delenv("RAGBENCH_FSYNC")  # the suite's setting: flushed, as a user's run is
    events = []
    fsync, rename = os.fsync, os.replace

    def synced(descriptor):
        events.append(("sync", Path(os.readlink(f"/proc/self/fd/{descriptor}")).name))
        fsync(descriptor)

    def renamed(source, target):
        events.append(("rename", Path(target).name))
        rename(source, target)

    monkeypatch.setattr(os, "fsync", synced)
    monkeypatch.setattr(os, "replace", renamed)
    first, second = tmp_path / "results.json", tmp_path / "report.md"
    first.write_text("old")
    write_all_atomically({first: "new", second: "report"})
    assert (first.read_text(), second.read_text()) == ("new", "report")
    assert [name for kind, name in events if kind == "sync" and not name.endswith(".tmp")] == [tmp_path.name]
    assert events[-1] == ("sync", tmp_path.name) and [kind for kind, _ in events].count("rename") == 2
    events.clear()
    second.unlink()
    second.mkdir()  # the second file cannot be renamed into place
    with pytest.raises(OSError):
        write_all_atomically({first: "newer", second: "report"})
    assert first.read_text() == "newer" and second.is_dir() and not any(second.iterdir())
    assert events[-1] == ("sync", tmp_path.name)  # the rename made is on disk
    assert sorted(path.name for path in tmp_path.iterdir()) == ["report.md", "results.json"]  # no temporary left


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

    from ragbench._storage.rundir import RunDir
    from ragbench.api import ConfigError

    folder = tmp_path / "run"
    first, second = RunDir(folder), RunDir(folder)
    take_lock = second.lock.acquire

    def first_runs_meanwhile():
        first.start({}, {"a": 1}, "h", resume=False)
        ended = threading.Timer(0.05, lambda: (first.finish("{}\n", "report", {}), first.lock.release()))
        ended.start()
        take_lock()  # tries again until the first run lets go
        ended.join()

    second.lock.acquire = first_runs_meanwhile
    with pytest.raises(ConfigError, match="already holds a run"):
        second.start({}, {"a": 1}, "h", resume=False)
    second.lock.release()
    assert json.loads((folder / "run.json").read_text())["finished"] is True

"""The user's files are never deleted, truncated or altered: every path through which ragbench deletes or
rewrites (the run lock, --overwrite, the response cache, the page cache, the temporaries a killed run left)
met with a real symbolic link to a user's file or folder, a user's SQLite file with a table of the same
name, a FIFO, a folder where a file is expected, a folder of the user's own samples/ and calls/. Each ends
in one line naming the file, and the user's files keep their bytes and times."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from conftest import write_jsonl
from helpers import cli, run

from ragbench._checks import PreflightError
from ragbench._storage.cache import ResponseCache
from ragbench._storage.page_cache import PageCache

QUESTION = {"id": "q", "question": "Q?", "answers": ["Q?"], "ctxs": []}


def run_args(data: Path, out: Path, *extra: str) -> list[str]:
    return ["--tasks", "popqa", "--system", "vanilla", "--model", "scripted:echo", "--data", f"popqa={data}",
            "--output", str(out), "--no-progress", "--bootstrap-iters", "20", *extra]


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry below `folder` (not following links): a file's bytes and mtime, a link's target."""
    entries = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        key = str(path.relative_to(folder))
        if path.is_symlink():
            entries[key] = ("link", os.readlink(path))
        elif path.is_file():
            entries[key] = ("file", path.read_bytes(), info.st_mtime_ns)
        elif path.is_dir():
            entries[key] = ("folder",)
        else:
            entries[key] = ("other", info.st_mode, info.st_mtime_ns)
    return entries


def refused_in_one_line(args: list[str], *needles: str) -> str:
    """`ragbench check` and the run itself end with exit 2 and the same one line holding each needle."""
    lines = []
    for command in (["check"], []):
        result = cli(*command, *args, timeout=60)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "Traceback" not in result.stderr
        [line] = [line for line in result.stderr.splitlines() if line.startswith("ragbench: error: ")]
        assert all(needle in line for needle in needles), line
        lines.append(line)
    assert lines[0] == lines[1]
    return lines[0]


def user_sqlite(path: Path, table: str = "responses") -> Path:
    """Another application's SQLite file, with a table named as ragbench's and 500 rows in it."""
    db = sqlite3.connect(path)
    db.execute(f"CREATE TABLE {table} (key TEXT PRIMARY KEY, engine TEXT, request TEXT, response TEXT, created REAL)")
    db.executemany(f"INSERT INTO {table} VALUES (?, 'e', NULL, 'theirs', 0)", [(str(i),) for i in range(500)])
    db.execute("CREATE TABLE users (name TEXT)")
    db.commit()
    db.close()
    return path


def user_path(home: Path, kind: str) -> Path:
    """A path of the user's holding `kind`: a SQLite file, a text file, an empty file, a symlink to a
    text file, a FIFO, a folder."""
    path = home / f"mine.{kind}"
    if kind == "sqlite":
        user_sqlite(path)
    elif kind in ("text", "symlink"):
        (home / "notes.txt").write_text("the user's notes\n")
        path.symlink_to(home / "notes.txt") if kind == "symlink" else path.write_text("the user's notes\n")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        (path / "inside").mkdir(parents=True)
    return path


CACHE_FAULTS = ["sqlite", "text", "empty", "symlink", "fifo", "folder"]


# --- the run lock ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["symlink", "hardlink", "fifo", "folder"])
def test_a_run_lock_that_is_not_a_lock_file_is_refused_in_one_line_and_never_written(tmp_path, kind):
    home, out = tmp_path / "home", tmp_path / "run"
    home.mkdir()
    out.mkdir()
    (home / "notes.txt").write_text("the user's notes\n")
    lock = out / "run.lock"
    if kind == "symlink":
        lock.symlink_to(home / "notes.txt")
    elif kind == "hardlink":
        os.link(home / "notes.txt", lock)
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    data = write_jsonl(tmp_path / "popqa.jsonl", [QUESTION])
    before = snapshot(home)
    what = {"symlink": "is a symbolic link", "hardlink": "is a hard link", "fifo": "is a FIFO",
            "folder": "is a folder"}[kind]
    line = refused_in_one_line(run_args(data, out), f"{lock} {what}", "remove it")
    assert line.startswith(f"ragbench: error: --output {out}: {lock} {what}")
    assert snapshot(home) == before
    assert sorted(p.name for p in out.iterdir()) == ["run.lock"]



"""What ragbench keeps for the user is never replaced: a file moved aside (a damaged cache and its WAL files)
takes the first free name, also when the same name comes twice (the same second, a clock stepped back, two
runs at once) and when the user has a file of that name."""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
import types
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._storage import store_checks
from ragbench._storage.cache import ResponseCache
from ragbench._storage.files import move_aside


def contents_beside(folder: Path) -> list[bytes]:
    return sorted(path.read_bytes() for path in folder.iterdir())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(max_size=20), min_size=1, max_size=8, unique=True))
def test_every_copy_moved_aside_under_one_name_survives(contents):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "c.sqlite"
        for content in contents:
            path.write_bytes(content)
            move_aside(path, "c.sqlite.kept")
        assert not path.exists()
        assert contents_beside(Path(folder)) == sorted(contents)


def test_movers_at_the_same_moment_keep_every_copy(tmp_path):
    sources = [tmp_path / f"source{i}" for i in range(16)]
    for i, source in enumerate(sources):
        source.write_text(f"copy {i}")
    start = threading.Barrier(len(sources))

    def mover(source: Path) -> None:
        start.wait()
        move_aside(source, "kept")

    threads = [threading.Thread(target=mover, args=(source,)) for source in sources]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    kept = sorted(path.name for path in tmp_path.iterdir())
    assert kept == sorted(["kept", *(f"kept.{n}" for n in range(2, 17))])
    assert sorted(path.read_text() for path in tmp_path.iterdir()) == sorted(f"copy {i}" for i in range(16))


def test_a_file_of_the_user_at_the_name_and_its_companions_names_are_left_alone(tmp_path):
    path = tmp_path / "c.sqlite"
    (tmp_path / "c.sqlite.kept").write_text("the user's")
    (tmp_path / "c.sqlite.kept.2-wal").write_text("the user's wal")  # a companion's name taken: .2 is not free
    path.write_text("database")
    Path(f"{path}-wal").write_text("wal")
    aside = move_aside(path, "c.sqlite.kept", companions=("-wal", "-shm"))
    assert aside.name == "c.sqlite.kept.3"
    assert aside.read_text() == "database" and Path(f"{aside}-wal").read_text() == "wal"
    assert (tmp_path / "c.sqlite.kept").read_text() == "the user's"
    assert (tmp_path / "c.sqlite.kept.2-wal").read_text() == "the user's wal"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "c.sqlite.kept",
        "c.sqlite.kept.2-wal",
        "c.sqlite.kept.3",
        "c.sqlite.kept.3-wal",
    ]  # no claimed name left empty


def test_a_companion_removed_between_the_listing_and_the_move_is_skipped(tmp_path, monkeypatch):
    """SQLite deletes a WAL file when another connection to the database closes: seen there, gone a moment
    later. The file and its other companions still move (seen failing: FileNotFoundError, nothing moved)."""
    path = tmp_path / "c.sqlite"
    path.write_text("database")
    Path(f"{path}-wal").write_text("wal")
    seen = os.path.lexists
    monkeypatch.setattr(os.path, "lexists", lambda name: str(name).endswith("-shm") or seen(name))
    aside = move_aside(path, "c.sqlite.kept", companions=("-wal", "-shm"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.sqlite.kept", "c.sqlite.kept-wal"]
    assert aside.read_text() == "database" and Path(f"{aside}-wal").read_text() == "wal"


def test_a_mover_whose_source_vanished_leaves_no_empty_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        move_aside(tmp_path / "gone", "gone.kept")
    assert list(tmp_path.iterdir()) == []


def damaged_cache(path: Path, content: bytes) -> None:
    """A cache file ragbench made (in a run folder: `owned`) whose bytes are not a database."""
    path.write_bytes(b"not a database: " + content)


def test_two_damaged_caches_moved_aside_in_the_same_second_are_both_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(store_checks, "time", types.SimpleNamespace(strftime=lambda _format: "20260101T000000"))
    path = tmp_path / "cache.sqlite"
    for content in (b"first", b"second", b"third"):
        damaged_cache(path, content)
        ResponseCache(path, owned=True).close()
    kept = {p.name: p.read_bytes() for p in tmp_path.glob("cache.sqlite.damaged-*")}
    assert kept == {
        "cache.sqlite.damaged-20260101T000000": b"not a database: first",
        "cache.sqlite.damaged-20260101T000000.2": b"not a database: second",
        "cache.sqlite.damaged-20260101T000000.3": b"not a database: third",
    }
    with sqlite3.connect(path) as db:  # the fresh one in its place
        assert db.execute("SELECT count(*) FROM responses").fetchone() == (0,)
    db.close()

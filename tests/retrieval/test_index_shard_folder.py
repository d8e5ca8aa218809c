"""`ragbench index shard --overwrite` replaces only a split ragbench made: a shards-S folder the user made (no
shards.json), or a split holding a file of the user's, is refused in one line and left as it is; a symbolic link
there is replaced, never followed; a split of ragbench's (a stale one too) is replaced."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import needs
from ragbench.testing import build_index, installed_registry
from support.helpers import cli_here

pytestmark = needs("bm25s")


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("shard")
    corpus = folder / "corpus.jsonl"
    words = ["river", "king", "queen", "castle", "song", "winter"]
    corpus.write_text("".join(json.dumps({"id": str(i), "title": "", "text": f"{words[i % 6]} {words[(i + 2) % 6]}"})
                              + "\n" for i in range(8)))  # fmt: skip
    build_index(corpus, folder / "index", "bm25", {}, progress=False, registry=installed_registry())
    return folder / "index"


def shard(index: Path, *extra: str):
    return cli_here("index", "shard", "--index", str(index), "--shards", "2", *extra)


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["notes.txt", "000/mine.txt", "001/bm25/mine.npy", "shards.json", "999/a"]),
    content=st.one_of(st.binary(max_size=40), st.sampled_from([b'{"shards": []}', b'{"format": 1}', b"{}"])),
)
def test_overwrite_never_deletes_a_folder_or_file_ragbench_did_not_split(index, name, content):
    target = index / "shards-2"
    if target.exists():
        shutil.rmtree(target)
    if name != "shards.json":  # a split of ragbench's with a file of the user's added
        assert shard(index).returncode == 0
    (target / name).parent.mkdir(parents=True, exist_ok=True)
    (target / name).write_bytes(content)
    before = tree(target)
    kept = shard(index)  # the split is used as it is (a file beside its shards is not read), or refused
    assert kept.returncode == 0 if name != "shards.json" else "move it away" in kept.stderr
    done = shard(index, "--overwrite")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "not a split ragbench made" in done.stderr
    assert "move it away" in done.stderr
    assert tree(target) == before


def test_overwrite_replaces_a_link_not_the_folder_it_leads_to_and_a_stale_split_of_its_own(index, tmp_path):
    target = index / "shards-2"
    if target.exists():
        shutil.rmtree(target)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("the user's")
    target.symlink_to(mine)
    assert "split again with --overwrite" in shard(index).stderr
    assert shard(index, "--overwrite").returncode == 0
    assert not target.is_symlink() and (target / "shards.json").is_file()
    assert tree(mine) == {"keep.txt": b"the user's"}
    record = json.loads((target / "shards.json").read_text())
    record["index_manifest_sha256"] = "0" * 64  # split from an earlier build: ragbench's, replaced
    (target / "shards.json").write_text(json.dumps(record))
    assert "split again with --overwrite" in shard(index).stderr
    assert shard(index, "--overwrite").returncode == 0
    assert json.loads((target / "shards.json").read_text())["index_manifest_sha256"] != "0" * 64

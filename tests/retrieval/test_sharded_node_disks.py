"""A shard whose folder is on one node's own disk is served by an actor placed on that node (`sharding/homes.py`):
a fourth node joins the tests' local Ray cluster from a mount namespace of its own (`unshare -m`, root only), in
which the shards folder holds shard 1, which no other node (and not the run's process) sees. The run's answers are
the whole index's, shard 1's actor on that node. Before, the actor went anywhere (SPREAD) and was refused:
`shard 1 (...): 001/bm25/...: is missing`. A shard no node holds is refused in one line naming it."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import needs
from ragbench._errors import ConfigError
from ragbench._retrieval.sharding.homes import homes
from ragbench._retrieval.sharding.placement import packed
from ragbench._retrieval.sharding.split import split_index
from ragbench.testing import build_index, installed_registry, load_retriever
from support.retrieval_samples import passages, write_dpr_tsv

QUERIES = ["king queen castle", "running river", "Moses the prophet", "zzz unknown words", "song"]


def own_mounts() -> bool:
    try:
        return subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@given(st.integers(1, 8), st.integers(1, 6), st.data())
def test_each_actor_is_pinned_to_a_node_holding_all_its_shards_or_refused(shards, slots, data):
    groups = packed(shards, slots)
    nodes = data.draw(st.lists(st.frozensets(st.integers(0, shards - 1)), min_size=1, max_size=4))
    held = {f"node{i}": set(numbers) for i, numbers in enumerate(nodes)}
    try:
        pinned = homes(held, groups, lambda number: f"shard {number}", "split it again")
    except ConfigError as refused:
        assert any(not any(set(group) <= numbers for numbers in held.values()) for group in groups)
        assert "\n" not in str(refused)
        return
    if all(set(range(shards)) <= numbers for numbers in held.values()):
        assert pinned == [None] * len(groups)  # a shared file system: anywhere, no node pinned
    else:
        assert all(node is not None and set(group) <= held[node] for node, group in zip(pinned, groups))
        choices = [[node for node in held if set(group) <= held[node]] for group in groups]
        for only, other in [(a, b) for a in range(len(groups)) for b in range(len(groups)) if a != b]:
            if len(choices[only]) == 1 and pinned[other] == pinned[only]:  # it had no free node left
                assert all(node in pinned for node in choices[other])


@pytest.fixture(scope="module")
def node_disk(tmp_path_factory, ray_cluster):
    """(the index, whose shards-2/001 only the extra node sees, that node's id)."""
    import ray

    if os.geteuid() != 0 or shutil.which("ray") is None or not own_mounts():
        pytest.skip("needs root's `unshare -m` and the `ray` command: a node with a disk of its own")
    folder = tmp_path_factory.mktemp("node_disk")
    corpus = write_dpr_tsv(folder / "psgs_w100.tsv", passages(90))
    build_index(corpus, folder / "index", "bm25", {}, chunk_size=40, progress=False, registry=installed_registry())
    shards = split_index(folder / "index", 2, registry=installed_registry())
    shutil.copytree(shards, folder / "node_view")  # what the extra node sees at shards-2: both shards
    shutil.rmtree(shards / "001")  # what the others see: shard 0 alone
    before = {node["NodeID"] for node in ray.nodes() if node["Alive"]}
    script = (
        f"mount --bind {folder / 'node_view'} {shards} && "
        f"exec ray start --address={ray_cluster.address} --num-cpus=1 --block --disable-usage-stats --include-log-monitor=False"
    )
    node = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        joined: set[str] = set()
        while not joined and time.monotonic() < deadline and node.poll() is None:
            time.sleep(0.5)
            joined = {n["NodeID"] for n in ray.nodes() if n["Alive"]} - before
        assert joined, "the extra node did not join"
        yield folder / "index", joined.pop()
    finally:
        node.terminate()
        node.wait(timeout=60)


def answers(hits):
    return [[(doc.id, doc.score, doc.text) for doc in row] for row in hits]


@needs("bm25s", "ray")
def test_a_shard_on_one_nodes_own_disk_is_served_there(node_disk):
    index, node = node_disk
    registry = installed_registry()
    sharded = load_retriever("bm25", {"index": str(index), "shards": 2}, registry=registry)
    try:
        assert sharded.pool.nodes[1] == node and sharded.pool.nodes[0] != node
        searched = answers(sharded.search(QUERIES, 10))
    finally:
        sharded.close()
    shutil.copytree(index.parent / "node_view" / "001", index / "shards-2" / "001")  # the whole index, here
    whole = load_retriever("bm25", {"index": str(index)}, registry=registry)
    try:
        assert searched == answers(whole.search(QUERIES, 10))
    finally:
        whole.close()
        shutil.rmtree(index / "shards-2" / "001")


@needs("bm25s", "ray")
def test_a_shard_no_node_holds_is_refused_in_one_line(node_disk, tmp_path):
    index, _ = node_disk
    shutil.copytree(index, tmp_path / "index", ignore=shutil.ignore_patterns("shards-*"))
    shards = split_index(tmp_path / "index", 3, registry=installed_registry())
    shutil.rmtree(shards / "002")
    with pytest.raises(ConfigError) as refused:
        load_retriever("bm25", {"index": str(tmp_path / "index"), "shards": 3}, registry=installed_registry())
    line = str(refused.value)
    assert "\n" not in line and "shard 2 (passages 60..89" in line and "is on no node of the cluster" in line
    assert f"ragbench index shard --index {tmp_path / 'index'} --shards 3 --overwrite" in line

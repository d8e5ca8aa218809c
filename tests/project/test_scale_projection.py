"""benchmarks/scale_projection.py's arithmetic: the shard memory line it fits through the measured figures gives back
any fixed and per-passage parts, a node's memory falls with the nodes as that line says, and the build time is the
driver's serial work plus the workers' divided among them; sharded_search.py's corpus is reproducible and reused."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import paths

BENCHMARKS = paths.REPO / "benchmarks"


@pytest.fixture(scope="module")
def projection():
    sys.path.insert(0, str(BENCHMARKS))  # the script imports sharded_search from beside it
    spec = importlib.util.spec_from_file_location("scale_projection", BENCHMARKS / "scale_projection.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    sys.path.remove(str(BENCHMARKS))
    sys.modules.pop("sharded_search", None)


def figures_of(fixed: float, per_passage: float, passages: int, shards: int, kind: str = "bm25") -> dict:
    """Figures as sharded_search.py writes them, each actor's peak exactly fixed + per_passage x its passages."""
    sizes = [passages // shards + (1 if i < passages % shards else 0) for i in range(shards)]
    memory = {"memory_1": [[fixed + per_passage * passages, 1.0, 1.0]]}
    memory[f"memory_{shards}"] = [[fixed + per_passage * size, 1.0, 1.0] for size in sizes]
    kinds = {kind: {**memory, "index_bytes": 700 * passages}}
    return {"machine": {}, "passages": passages, "shards": shards, "dim": 768, "kinds": kinds}


@settings(max_examples=60, deadline=None)
@given(
    fixed=st.floats(50, 500),
    per_passage=st.floats(1e-6, 1e-2),
    passages=st.integers(1000, 10**7),
    shards=st.integers(2, 16),
)
def test_the_memory_line_gives_back_any_fixed_and_per_passage_parts(projection, fixed, per_passage, passages, shards):
    got_fixed, got_per_passage = projection.memory_line(figures_of(fixed, per_passage, passages, shards), "bm25")
    assert got_per_passage == pytest.approx(per_passage, rel=1e-6)
    assert got_fixed == pytest.approx(fixed, rel=1e-6, abs=1e-6)


def test_a_nodes_memory_and_the_build_time_follow_the_measured_parts(projection):
    figures = figures_of(fixed=100.0, per_passage=0.001, passages=10**6, shards=3)  # MB; 1 kB a passage
    rates = {"bm25": {"worker_s": 4e-4, "driver_s": 1e-4, "split_s": 0.0, "driver_mb": 0.0005}}
    rows = projection.projection_rows(figures, rates, cores=4, encode_rate=None, dim=768)
    wiki = [row.split(" | ") for row in rows if "wiki-18" in row]
    assert [row[2] for row in wiki] == ["4", "8", "16", "32"] and [row[3] for row in wiki] == ["4", "8", "16", "32"]
    passages = projection.CORPORA["wiki-18"]
    for row, nodes in zip(wiki, (4, 8, 16, 32)):
        expected_gb = (100 + 0.001 * passages / nodes) * projection.MB / projection.GB
        assert row[4] == f"{expected_gb:.1f} GB"
        assert row[6] == projection.duration(passages * 1e-4 + passages * 4e-4 / (nodes * 4))
    assert wiki[0][7] == f"{0.0005 * passages * projection.MB / projection.GB:.0f} GB |"


def test_faiss_builds_are_projected_only_with_a_measured_encoder_rate(projection):
    figures = figures_of(fixed=130.0, per_passage=0.003, passages=10**6, shards=3, kind="faiss_index")
    unmeasured = projection.projection_rows(figures, {}, cores=4, encode_rate=None, dim=768)
    assert all("encoder rate not measured" in row for row in unmeasured)
    given_rate = projection.projection_rows(figures, {}, cores=4, encode_rate=1000.0, dim=768)
    assert projection.duration(projection.CORPORA["wiki-18"] / 4000) in given_rate[0]
    half = projection.projection_rows(figures, {}, cores=4, encode_rate=None, dim=384)  # vectors of half the bytes
    assert float(half[0].split(" | ")[4].split()[0]) < float(unmeasured[0].split(" | ")[4].split()[0])


def test_the_synthetic_corpus_is_reproducible_and_an_existing_one_is_kept(projection, tmp_path):
    write_corpus = sys.modules["sharded_search"].write_corpus
    write_corpus(tmp_path / "a.jsonl", 300)
    write_corpus(tmp_path / "b.jsonl", 300)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert len((tmp_path / "a.jsonl").read_text().splitlines()) == 300
    (tmp_path / "a.jsonl").write_text("kept\n")
    write_corpus(tmp_path / "a.jsonl", 300)  # --work-dir: the corpus an index was built from is not rewritten
    assert (tmp_path / "a.jsonl").read_text() == "kept\n"


class EndsWhenAsked:
    """A real child process that ends (and turns zombie, unreaped) at the moment its status is read, as a shard
    actor does when its pool closes while sharded_search.py lists the live ones."""

    def __init__(self, child: subprocess.Popen) -> None:
        self.child, self.process = child, psutil.Process(child.pid)

    def status(self) -> str:
        seen = self.process.status()
        self.child.kill()
        while self.process.status() != psutil.STATUS_ZOMBIE:
            os.sched_yield()
        return seen

    def cmdline(self) -> list[str]:
        return self.process.cmdline()


def test_a_shard_actor_that_ends_while_it_is_read_is_not_listed(projection):
    is_shard_actor = sys.modules["sharded_search"].is_shard_actor
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)", "_ShardActor"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "up\n"  # its command line is python's now
        assert is_shard_actor(psutil.Process(child.pid))
        assert not is_shard_actor(EndsWhenAsked(child))  # was psutil.ZombieProcess out of cmdline(): CI's failure
    finally:
        child.kill()
        child.wait()

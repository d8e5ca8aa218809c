"""`ragbench index build --ray`: the index a pool of Ray actors builds (on the tests' shared 3-node local Ray
cluster, `ray_cluster`) is the one-process build's, file for file, for any corpus, block size and worker count;
lucene_bm25's still answers as pyserini; a build killed for real resumes from its block files (a damaged one built
again); the shards it writes are `ragbench index shard`'s."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA, needs, write_jsonl
from ragbench._retrieval.sharding.merged_build.build import build_parallel
from ragbench._retrieval.sharding.merged_build.state import state_folder
from ragbench.testing import build_index, installed_registry, load_retriever
from support.helpers import cli_here, closed_port

pytestmark = needs("bm25s", "regex", "ray")  # not imported while the tests are collected


VARYING = ("build_seconds", "built_at")  # the manifest's fields a build's clock sets
WORDS = ["castle", "castles", "king", "winter", "song", "the", "of", "Moses", "über", "naïve", "東京", "emoji🙂", "a"]
QUERIES = ["Which king built the castle?", "song of winter", "über naïve", "東京", "the", "zzz"]
OPTIONS = {"bm25": {}, "lucene_bm25": {}, "flashrag_bm25": {"language": "en"}}  # langid is not installed here


def tree(folder: Path) -> dict[str, object]:
    """Every file of an index folder: bytes, the manifest without the clock's fields."""
    files: dict[str, object] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = str(path.relative_to(folder))
        if name == "manifest.json":
            manifest = json.loads(path.read_text(encoding="utf-8"))
            files[name] = {key: value for key, value in manifest.items() if key not in VARYING}
        else:
            files[name] = path.read_bytes()
    return files


def searched(kind: str, index: Path, corpus: Path, registry=None) -> list[list[tuple[str | None, float]]]:
    args = {"index": str(index), **({"corpus": str(corpus)} if kind == "flashrag_bm25" else {})}
    retriever = load_retriever(kind, args, registry=registry or installed_registry())
    try:
        found = retriever.search(QUERIES, 5)
        return [[(doc.id, doc.score) for doc in hits] if isinstance(hits, list) else [] for hits in found]
    finally:
        retriever.close()


passage_text = st.one_of(
    st.just(""),
    st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=30),
)


SEEN = ["castle king", "song winter castles", "", "über naïve the", "東京 emoji🙂 song", "king castle"]


@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(passage_text, min_size=1, max_size=40),
    copies=st.integers(0, 3),
    block=st.integers(1, 8),
    workers=st.integers(1, 2),
    kind=st.sampled_from(sorted(OPTIONS)),
)
@example(texts=SEEN, copies=1, block=2, workers=2, kind="bm25")  # blocks that see words in another order
@example(texts=SEEN, copies=0, block=4, workers=1, kind="lucene_bm25")
@example(texts=SEEN[::-1], copies=2, block=3, workers=2, kind="flashrag_bm25")
def test_any_corpus_builds_on_ray_into_the_one_process_builds_files(ray_cluster, texts, copies, block, workers, kind):
    texts = texts + texts[:copies]  # duplicate texts
    docs = [{"id": f"d{i}", "contents": text} for i, text in enumerate(texts)]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = write_jsonl(Path(tmp) / "corpus.jsonl", docs)
        whole, parallel = Path(tmp) / "whole", Path(tmp) / "parallel"
        registry = installed_registry()
        build = {"title": False, "progress": False}
        build_index(corpus, whole, kind, dict(OPTIONS[kind]), registry=registry, **build)
        done = build_parallel(
            corpus, parallel, kind, dict(OPTIONS[kind]), ray_address=None, workers=workers, shards=None,
            registry=registry, chunk_size=block, **build,
        )  # fmt: skip
        assert (done.reused, done.analysed) == (0, -(-len(docs) // block))
        assert tree(parallel) == tree(whole)
        assert searched(kind, parallel, corpus) == searched(kind, whole, corpus)
        assert not state_folder(parallel).exists()


def test_lucene_bm25_built_on_ray_answers_as_pyserini(ray_cluster, tmp_path):
    recorded = json.loads((TEST_DATA / "lucene_bm25" / "pyserini.json").read_text(encoding="utf-8"))
    name = sorted(recorded["corpora"])[0]
    corpus = recorded["corpora"][name]
    docs = [{"id": doc["id"], "text": doc["contents"]} for doc in corpus["docs"]]
    path = write_jsonl(tmp_path / "corpus.jsonl", docs)
    build_parallel(
        path, tmp_path / "index", "lucene_bm25", {}, ray_address=None, workers=1, shards=None,
        registry=installed_registry(), chunk_size=max(1, len(docs) // 5), title=False, progress=False,
    )  # fmt: skip
    retriever = load_retriever("lucene_bm25", {"index": str(tmp_path / "index")}, registry=installed_registry())
    found = [[[doc.id, doc.score] for doc in hits] for hits in retriever.search(corpus["queries"], recorded["k"])]
    retriever.close()
    assert found == corpus["hits"]


def counting_registry(loads: Path, hold: Path | None = None):
    """The installed registry with a query style `counting` that appends its process's id to `loads` each time an
    encoder is made (each model load), then, in a process other than this one, waits while `hold` exists: a class
    of this function's, so Ray ships it to the actors by value."""
    import os
    import time

    from ragbench._catalog import Entry
    from ragbench._retrieval.query_style import QueryStyle

    driver = os.getpid()

    class CountingStyle(QueryStyle):
        def __init__(self) -> None:
            with open(loads, "a", encoding="utf-8") as handle:
                handle.write(f"{os.getpid()}\n")
            while hold is not None and os.getpid() != driver and hold.exists():
                time.sleep(0.05)  # until the test removes it, however long that takes

    registry = installed_registry()
    registry.query_styles["counting"] = Entry("query_styles", "counting", "tests:CountingStyle", _loaded=CountingStyle)
    return registry


def kill_first_actor(loads: Path, hold: Path, killed: list[int]) -> None:
    """SIGKILL the first encoder actor's process while it is held loading its model (a block is waiting for it),
    then let the actors go on."""
    import os
    import signal
    import time

    while not (pids := [int(p) for p in loads.read_text(encoding="utf-8").split() if int(p) != os.getpid()]):
        time.sleep(0.05)  # a poll, not a deadline
    os.kill(pids[0], signal.SIGKILL)
    killed.append(pids[0])
    hold.unlink()


def test_dense_encoder_actors_load_the_model_once_and_write_the_one_process_builds_files(ray_cluster, tmp_path):
    """Ten blocks, two encoder actors (several blocks each, more than a worker's share of a window): each actor's
    process loads the model once for the whole build, one killed (SIGKILL) while it loads is made again by Ray and
    its block sent again, and the embeddings are the one-process build's."""
    import os
    import threading

    from support.component_models import tiny_encoder

    model = tiny_encoder(tmp_path / "encoder", [w.lower() for w in WORDS])
    docs = [{"id": str(i), "contents": " ".join(WORDS[i % 7 : i % 7 + i % 5])} for i in range(50)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    loads, hold = tmp_path / "loads", tmp_path / "hold"
    registry = counting_registry(loads, hold)
    options = {"model": str(model), "query_instruction": "", "query_style": "counting"}
    build = {"title": False, "progress": False, "chunk_size": 5}  # a block is a chunk: the same encoder batches
    build_index(corpus, tmp_path / "whole", "dense", dict(options), registry=registry, **build)
    hold.touch()
    killed: list[int] = []
    killer = threading.Thread(target=kill_first_actor, args=(loads, hold, killed), daemon=True)
    killer.start()
    done = build_parallel(
        corpus, tmp_path / "parallel", "dense", dict(options), ray_address=None, workers=2, shards=None,
        registry=registry, **build,
    )  # fmt: skip
    killer.join()
    actors = [int(pid) for pid in loads.read_text(encoding="utf-8").split() if int(pid) != os.getpid()]
    # one load an actor's process (2 actors, 1 made again), not one a window of blocks (4, 5 with the kill)
    assert (done.analysed, len(actors), len(set(actors)), actors[0]) == (10, 3, 3, killed[0])
    assert tree(tmp_path / "parallel") == tree(tmp_path / "whole")
    found = searched("dense", tmp_path / "parallel", corpus, registry)
    assert found == searched("dense", tmp_path / "whole", corpus, registry)
    from ragbench.api import ConfigError

    with pytest.raises(ConfigError, match="--workers 4: the Ray cluster has 3 CPUs and a worker actor takes one"):
        build_parallel(  # more encoder actors than the cluster holds: refused, not waited for forever
            corpus, tmp_path / "more", "dense", dict(options), ray_address=None, workers=4, shards=None,
            registry=registry, **build,
        )  # fmt: skip


def test_a_killed_build_resumes_from_its_blocks_and_rebuilds_damaged_ones(ray_cluster, tmp_path):
    """The driver is killed (SIGKILL) while it waits to write the last block (its `.partial` file is a FIFO no one
    reads); the second invocation reuses the whole blocks, builds a cut-short one and one holding another block's
    postings again, and writes the one-process build's index."""
    import os
    import signal
    import subprocess
    import sys
    import time

    docs = [{"id": str(i), "contents": " ".join(WORDS[i % 11 : i % 11 + 1 + i % 4])} for i in range(40)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    out = tmp_path / "parallel"
    state = state_folder(out)
    args = ["index", "build", "--corpus", str(corpus), "--retriever", "lucene_bm25", "--out", str(out), "--no-title",
            "--no-progress", "--chunk-size", "5", "--ray", ray_cluster.address, "--workers", "1"]  # fmt: skip
    blocks = 8  # two waves of four
    driver = subprocess.Popen([sys.executable, "-m", "ragbench._cli.main", *args], stderr=subprocess.DEVNULL)
    try:
        while not (state / "ray-build.json").is_file():
            assert driver.poll() is None, "the build ended before its state folder appeared"
            time.sleep(0.05)  # a poll, not a deadline: leaves the build the machine's cores
        os.mkfifo(state / f"block-{blocks - 1:06d}.npz.partial")  # the last block's file: its write never ends
        while len(list(state.glob("block-*.npz"))) < 4:  # the first wave written
            assert driver.poll() is None, "the build ended before its blocks were written"
            time.sleep(0.05)
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    written = sorted(state.glob("block-*.npz"))
    written[0].write_bytes(written[0].read_bytes()[:100])  # cut short
    written[2].write_bytes(written[1].read_bytes())  # another block's
    resumed = cli_here(*args)  # the same command again, on the cluster this process is connected to
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed: {len(written) - 2} of {blocks} blocks read from the interrupted build" in resumed.stdout
    build = {"title": False, "progress": False, "chunk_size": 5}
    build_index(corpus, tmp_path / "whole", "lucene_bm25", registry=installed_registry(), **build)
    assert tree(out) == tree(tmp_path / "whole")
    assert not state.exists()


def test_shards_written_by_a_parallel_build_are_index_shards(ray_cluster, tmp_path):
    from ragbench._retrieval.sharding.split import split_index

    docs = [{"id": str(i), "contents": " ".join(WORDS[i % 9 : i % 9 + 3])} for i in range(17)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    registry, build = installed_registry(), {"title": False, "progress": False}
    build_index(corpus, tmp_path / "whole", "bm25", {}, registry=registry, **build)
    split_index(tmp_path / "whole", 3, registry=installed_registry())
    done = build_parallel(
        corpus, tmp_path / "parallel", "bm25", {}, ray_address=None, workers=2, shards=3, registry=registry,
        chunk_size=4, **build,
    )  # fmt: skip
    assert done.shards == tmp_path / "parallel" / "shards-3"
    shards = {name: data for name, data in tree(tmp_path / "parallel").items() if name.startswith("shards-3/0")}
    assert len(shards) == 3 * 5 and shards == {
        name: data for name, data in tree(tmp_path / "whole").items() if name.startswith("shards-3/0")
    }


def test_a_folder_of_the_users_where_the_build_state_goes_is_refused_untouched(ray_cluster, tmp_path):
    from ragbench.api import ConfigError

    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"id": "1", "contents": "castle"}])
    mine = state_folder(tmp_path / "index")
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="ray-build.json: not the build state"):
        build_parallel(
            corpus, tmp_path / "index", "bm25", {}, ray_address=None, workers=1, shards=None,
            registry=installed_registry(), progress=False,
        )  # fmt: skip
    assert (mine / "notes.txt").read_text() == "mine" and not (tmp_path / "index").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--retriever", "bm25", "--workers", "2"], "--workers is an option of --ray: pass --ray"),
        (["--retriever", "bm25", "--shards", "2"], "--shards is an option of --ray: pass --ray"),
        (["--retriever", "bm25", "--ray", "--workers", "0"], "--workers 0: must be at least 1"),
        (["--retriever", "lucene_bm25", "--ray", "--shards", "0"], "--shards 0: must be at least 1"),
        (["--retriever", "example_bm25", "--ray"], "--ray builds bm25, lucene_bm25, flashrag_bm25, dense indexes"),
        (["CLOSED"], "a cluster's address where nothing listens (ray.init would wait minutes)"),
    ],
)
def test_parallel_options_out_of_place_fail_in_one_line_before_work(tmp_path, args, message, ragbench_zygote):
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"id": "1", "contents": "castle"}])
    # a refusal before work runs in this process (it starts nothing); the command that asks ray.init, in a process
    # of its own (a fork of the command zygote, which has not imported Ray: ray.init's state is the command's alone)
    asks_ray = args == ["CLOSED"]
    with contextlib.ExitStack() as stack:
        command = ["index", "build", "--corpus", str(corpus), "--out", str(tmp_path / "index")]
        if asks_ray:  # held closed while the command runs
            port = stack.enter_context(closed_port())
            args, message = ["--retriever", "bm25", "--ray", f"127.0.0.1:{port}"], f"127.0.0.1:{port}: nothing listens"
            done = ragbench_zygote.run([*command, *args], dict(os.environ), timeout=120)
        else:
            done = cli_here(*command, *args)
    assert done.returncode != 0 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "index").exists() and not state_folder(tmp_path / "index").exists()


def test_a_dense_build_resumed_with_a_changed_model_folder_reuses_no_block(tmp_path):
    """The build's key (what its blocks are reused for) holds each file of the dense model's folder: weights replaced
    between a killed build and its second invocation make another key, so the old blocks are not taken as this
    model's embeddings."""
    from ragbench._retrieval.sharding.kind_lookup import sharded_kind

    model_files = sharded_kind(installed_registry(), "dense").key_files

    model = tmp_path / "encoder"
    (model / "sub").mkdir(parents=True)
    (model / "config.json").write_text("{}", encoding="utf-8")
    (model / "sub" / "weights.bin").write_bytes(b"\x00" * 8)
    before = model_files({"model": str(model)})
    assert [entry[0] for entry in before] == ["config.json", "sub/weights.bin"]
    (model / "sub" / "weights.bin").write_bytes(b"\x01" * 9)
    assert model_files({"model": str(model)}) != before
    assert model_files({"model": "org/hub-name"}) == []  # no local folder: nothing to read


def test_more_workers_than_this_machine_has_cpus_is_refused_before_a_local_ray_starts(tmp_path, monkeypatch):
    """A refusal that needs no Ray starts none: a Ray of this machine has at most its CPUs (it printed Ray's own
    lines, then the refusal, once Ray had started)."""
    import os

    import ray

    from ragbench._retrieval.sharding.merged_build.feeder import RayFeeder
    from ragbench.api import ConfigError

    def started(self):
        raise AssertionError("Ray was started")

    monkeypatch.setattr(RayFeeder, "start_ray", started)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # (a Ray an earlier test of this process joined)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"id": str(i), "contents": "castle"} for i in range(9)])
    cpus = os.cpu_count() or 1
    with pytest.raises(ConfigError) as refused:
        build_parallel(
            corpus, tmp_path / "index", "bm25", {}, ray_address=None, workers=cpus + 1, shards=None,
            registry=installed_registry(), progress=False,
        )  # fmt: skip
    assert str(refused.value) == (
        f"--workers {cpus + 1}: a Ray of this machine has at most its {cpus} CPUs and a worker actor takes one; "
        f"pass --workers {cpus} or fewer, or give a cluster's address (--ray HOST:6379)"
    )
    assert not (tmp_path / "index").exists()

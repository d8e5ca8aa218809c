"""Files in an object store (`ragbench/_storage/locations.py`), against a real S3 server: moto's, on 127.0.0.1,
started and stopped here. An index and its shards (`--retriever-arg index=s3://...`) served by shard actors on the
tests' local Ray cluster (`ray_cluster`) answer as the local index; a shard file changed in the bucket is refused by
the actor that fetches it (its content digest, one line naming its URL); an endpoint that does not answer, a
missing bucket or key is one line naming the URL and the fix; `index build --corpus s3://...` builds the index its
local file builds; a byte range reads as the local file's. A shard build lost mid-way is resumed on another
machine by `index build --ray`; a docs store or a split index's front file written over in the store is refused,
never shown; the shard actors' start is reported apart from the search latency. This process joins the cluster
with this module's environment (the store's endpoint and dummy credentials, a cache folder of its own) for its
workers, which its actors read as they would a node's own (Ray's runtime_env env_vars)."""

from __future__ import annotations

import io
import json
import re
import socket
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import needs, write_jsonl
from ragbench._errors import ConfigError
from ragbench._retrieval.base import RetrievalError
from ragbench._retrieval.sharding.actors import ShardPool
from ragbench._retrieval.sharding.build.driver import build_shards
from ragbench._retrieval.sharding.build.kind import TextSettings
from ragbench._retrieval.sharding.build.runner import InProcess
from ragbench._retrieval.sharding.split import split_index
from ragbench._storage.locations import TIMEOUT_VARIABLE, cached_folder, open_for_reading, read_range, remote_files
from ragbench.testing import build_index, installed_registry, load_retriever
from support.helpers import cli_here, run, samples
from support.object_store import LostAfterOneShard, cut_build, s3_server, shard_files, store_listing
from support.retrieval_samples import WORDS, passages, write_dpr_tsv

pytestmark = needs("bm25s", "ray", "s3fs", "moto", "flask", "flask_cors")  # moto's server runs on flask
QUERIES = ["king queen castle", "running river", "Moses the prophet", "zzz unknown words", "song"]
RUN_QUERIES = ["king queen castle", "running river", "Moses the prophet", "music song", "senate election"]  # all hit
TASK = "nq_open_flashrag"
SHARDS = 2


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """(the s3fs file system of moto's server on 127.0.0.1, the local index uploaded to s3://bench/index), this
    module's environment set before this process joins the Ray cluster (its workers' too)."""
    folder = tmp_path_factory.mktemp("s3")
    with s3_server(folder) as fs:
        corpus = write_dpr_tsv(folder / "psgs_w100.tsv", passages(90))
        build_index(corpus, folder / "index", "bm25", {}, chunk_size=40, progress=False, registry=installed_registry())
        split_index(folder / "index", SHARDS, registry=installed_registry())
        fs.put(str(folder / "index"), "bench/index", recursive=True)
        yield fs, folder / "index"


def answers(hits):
    return [[(doc.id, doc.score, doc.text) for doc in row] for row in hits]


def test_shards_in_an_object_store_answer_as_the_local_index(store, ray_cluster):
    fs, local = store
    registry = installed_registry()
    whole = load_retriever("bm25", {"index": str(local)}, registry=registry)
    sharded = load_retriever("bm25", {"index": "s3://bench/index", "shards": SHARDS}, registry=registry)
    try:
        assert len(set(sharded.pool.nodes)) == SHARDS
        for k in (1, 7, 100):
            assert answers(sharded.search(QUERIES, k)) == answers(whole.search(QUERIES, k))
        assert sharded.pool.layout.shards[1].describe().endswith("s3://bench/index/shards-2/001)")
        assert sharded.metadata()["index"] == "s3://bench/index"
    finally:
        sharded.close()
        whole.close()


def test_a_shard_file_changed_in_the_bucket_is_refused_by_its_digest_in_one_line(store, ray_cluster):
    fs, _ = store
    fs.copy("bench/index", "bench/changed", recursive=True)
    name = max(fs.find("bench/changed/shards-2/001"), key=fs.size)  # its largest file, same size, other bytes
    held = fs.cat_file(name)
    fs.pipe_file(name, held[::-1])
    with pytest.raises(ConfigError) as refused:
        load_retriever("bm25", {"index": "s3://bench/changed", "shards": SHARDS}, registry=installed_registry())
    line = str(refused.value)
    assert "\n" not in line and f"s3://{name}: is not the file split into shard 1" in line
    assert "content digest" in line and "upload its shards-2 folder to s3://bench/changed/shards-2" in line


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "s3://no-such-bucket/index",
            "s3://no-such-bucket/index: the bucket no-such-bucket does not exist in the store",
        ),
        ("s3://bench/no-such-index", "s3://bench/no-such-index/manifest.json is missing"),
        ("s3://bench/index", "s3://bench/index: not readable (EndpointConnectionError"),
    ],
)
def test_an_unreadable_store_is_one_line_naming_the_url_and_the_fix(store, monkeypatch, url, expected):
    """No Ray needed: the run's process reads the index's front files first. The unreachable endpoint (a closed
    port) within the deadline, $RAGBENCH_STORAGE_TIMEOUT."""
    if "EndpointConnection" in expected:
        monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv(TIMEOUT_VARIABLE, "2")
    with pytest.raises(ConfigError) as refused:
        load_retriever("bm25", {"index": url, "shards": SHARDS}, registry=installed_registry())
    line = str(refused.value)
    assert "\n" not in line and expected in line
    assert ("AWS_ENDPOINT_URL" in line) == ("EndpointConnection" in expected)
    assert "check the bucket and key" in line or "upload the whole index folder" in line or "endpoint" in line


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 40000), st.integers(0, 6000))  # the file: ~20 kB
@example(start=0, length=0)
@example(start=10**6, length=5)  # past its end: empty, as a local file reads
def test_a_byte_range_of_a_remote_file_is_the_local_files(store, start, length):
    """`read_range` and `open_for_reading`, which corpus readers adopt, read an object as the local file."""
    fs, local = store
    path = local / "docs.jsonl"
    assert read_range("s3://bench/index/docs.jsonl", start, start + length) == read_range(path, start, start + length)
    with open_for_reading("s3://bench/index/docs.jsonl") as remote, open_for_reading(path) as here:
        remote.seek(start)
        here.seek(start)
        assert remote.read(length) == here.read(length)


def test_a_relative_index_path_is_the_runs_not_the_actors(store, ray_cluster, monkeypatch):
    _, local = store
    monkeypatch.chdir(local.parent)
    registry = installed_registry()
    whole = load_retriever("bm25", {"index": str(local)}, registry=registry)
    sharded = load_retriever("bm25", {"index": "index", "shards": SHARDS}, registry=registry)
    try:
        assert answers(sharded.search(QUERIES, 5)) == answers(whole.search(QUERIES, 5))
    finally:
        sharded.close()
        whole.close()


def test_a_corpus_in_the_store_builds_the_index_its_local_file_builds(store, tmp_path):
    fs, local = store
    fs.put_file(str(local.parent / "psgs_w100.tsv"), "bench/corpus/psgs_w100.tsv")
    url = "s3://bench/corpus/psgs_w100.tsv"
    args = ["index", "build", "--corpus", url, "--retriever", "bm25", "--chunk-size", "40", "--no-progress"]
    built = cli_here(*args, "--out", str(tmp_path / "built"))
    assert built.returncode == 0, built.stderr
    assert f"corpus {url}: read from its copy " in built.stdout
    files = sorted(p.relative_to(local) for p in local.rglob("*") if p.is_file() and "shards-" not in str(p))
    for name in files:
        if name.name != "manifest.json":
            assert (tmp_path / "built" / name).read_bytes() == (local / name).read_bytes(), name
    manifest = json.loads((tmp_path / "built" / "manifest.json").read_text())
    assert manifest["corpus"]["sha256"] == json.loads((local / "manifest.json").read_text())["corpus"]["sha256"]
    header, rows = (local.parent / "psgs_w100.tsv").read_bytes().split(b"\n", 1)
    written_again = header + b"\n" + rows.translate(bytes.maketrans(b"ae", b"ea"))
    fs.pipe_file("bench/corpus/psgs_w100.tsv", written_again)  # of the same size: its new version is read
    again = cli_here(*args, "--out", str(tmp_path / "again"))
    assert again.returncode == 0, again.stderr
    swapped = str.maketrans("ae", "ea")
    texts = [json.loads(line)["text"] for line in (local / "docs.jsonl").read_text().splitlines()]
    again_texts = [json.loads(line)["text"] for line in (tmp_path / "again" / "docs.jsonl").read_text().splitlines()]
    assert again_texts == [text.translate(swapped) for text in texts] != texts


@pytest.mark.parametrize(("name", "kind"), [("psgs_w100.tsv", "bm25"), ("corpus.jsonl", "lucene_bm25")])
def test_shard_tasks_read_their_own_byte_ranges_of_a_corpus_in_the_store(store, ray_cluster, tmp_path, name, kind):
    """`index build --ray --shards 3 --corpus s3://...`: each Ray task reads its part's bytes from the store (no
    copy of the corpus in any node's cache); the shards are the local file's, byte for byte."""
    fs, local = store
    corpus = local.parent / name
    if name.endswith(".jsonl"):
        write_jsonl(corpus, [{"id": doc.id, "title": doc.title, "text": doc.text} for doc in passages(90, seed=3)])
    fs.put_file(str(corpus), f"bench/parts/in-parts{corpus.suffix}")
    url = f"s3://bench/parts/in-parts{corpus.suffix}"
    here = build_shards(corpus, tmp_path / "here", kind, {}, 3, registry=installed_registry())
    built = cli_here("index", "build", "--corpus", url, "--retriever", kind, "--out", str(tmp_path / "there"),
                "--ray", ray_cluster.address, "--shards", "3", "--no-progress")  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert "read from its copy" not in built.stdout
    there = tmp_path / "there" / "shards-3"
    assert shard_files(there) == shard_files(here.folder)
    assert json.loads((there / "manifest.json").read_text())["corpus"]["path"] == url
    assert not list((local.parent / "cache").rglob("in-parts*"))  # the run's and the Ray workers' cache


def test_shards_built_as_shards_are_served_from_the_store_as_the_one_index_answers(store, ray_cluster, tmp_path):
    """INDEX/shards-2 of `index build --ray --shards 2`, uploaded: the run reads the hits' passages by ranged reads
    of the shards' docs stores and the actors fetch only their scoring files (no docs.jsonl in any node's cache);
    the answers are the one-process index's. A docs store changed in the bucket fails in one line (its blocks'
    digests)."""
    fs, local, kind = *store, "lucene_bm25"
    corpus = local.parent / "psgs_w100.tsv"
    build_index(corpus, tmp_path / "one", kind, {}, progress=False, registry=installed_registry())
    build_shards(corpus, tmp_path / "built", kind, {}, 2, registry=installed_registry())
    fs.put(str(tmp_path / "built" / "shards-2"), f"bench/{kind}/shards-2", recursive=True)
    registry = installed_registry()
    whole = load_retriever(kind, {"index": str(tmp_path / "one")}, registry=registry)
    sharded = load_retriever(kind, {"index": f"s3://bench/{kind}", "shards": 2}, registry=registry)
    try:
        for k in (1, 10, 100):
            assert answers(sharded.search(QUERIES, k)) == answers(whole.search(QUERIES, k))
        assert sharded.metadata()["index"] == f"s3://bench/{kind}" and len(set(sharded.pool.nodes)) == 2
    finally:
        sharded.close()
        whole.close()
    for number in range(2):  # each node's cache of the shard (one cache here): its scoring files, no docs store
        cached = sorted(p.name for p in cached_folder(f"s3://bench/{kind}/shards-2/{number:03d}").rglob("*"))
        assert cached and "docs.jsonl" not in cached and "docs.offsets.npy" not in cached
    offsets = f"bench/{kind}/shards-2/001/docs.offsets.npy"
    held = fs.cat_file(offsets)
    fs.pipe_file(offsets, held[:-8] + (int.from_bytes(held[-8:], "little") + 1).to_bytes(8, "little"))  # same size
    with pytest.raises(ConfigError) as refused:
        load_retriever(kind, {"index": f"s3://bench/{kind}", "shards": 2}, registry=registry)
    line = str(refused.value)
    assert "\n" not in line and "shards-2/001/docs.offsets.npy: bytes 0..487 are not those written" in line
    assert "it was written over" in line  # its blocks' digests, recorded by the build


class RewrittenMidBuild(InProcess):
    """Runs the steps here; the corpus's object is written again before step 2, at its size (another ETag)."""

    def __init__(self, fs, key):
        self.fs, self.key = fs, key

    def map(self, function, calls, **options):
        if function.__name__ == "finish_part":
            self.fs.pipe_file(self.key, self.fs.cat_file(self.key).translate(bytes.maketrans(b"ae", b"ea")))
        return super().map(function, calls, **options)


def test_a_corpus_object_written_again_mid_build_is_refused_and_out_must_be_a_folder(store, tmp_path, monkeypatch):
    fs, local = store
    fs.put_file(str(local.parent / "psgs_w100.tsv"), "bench/moving/corpus.tsv")
    assert set(remote_files("s3://bench/moving")) == {"corpus.tsv"}  # a listing this process keeps: never read stale
    with pytest.raises(ConfigError, match=r"corpus s3://bench/moving/corpus.tsv changed while it was indexed"):
        build_shards("s3://bench/moving/corpus.tsv", tmp_path / "built", "bm25", {}, 2,
                     registry=installed_registry(), runner=lambda: RewrittenMidBuild(fs, "bench/moving/corpus.tsv"))  # fmt: skip
    monkeypatch.chdir(tmp_path)
    refused = cli_here("index", "build", "--corpus", str(local.parent / "psgs_w100.tsv"), "--retriever", "bm25",
                       "--out", "s3://bench/out", "--no-progress")  # fmt: skip
    assert refused.returncode != 0 and "--out s3://bench/out: an index is built into a folder" in refused.stderr
    assert not (tmp_path / "s3:").exists()


def test_shards_built_straight_into_the_store_answer_as_the_local_build(store, ray_cluster, tmp_path):
    """`index build --ray --shards 2 --out s3://...`: each task puts its shard's files in the store, the driver the
    manifest and then shards.json; the store holds the local build's files, byte for byte, and `shards=2` from there
    answers as the one index. Shards there already are refused without --overwrite; with it their shards.json goes
    first, so a build lost mid-way leaves nothing a run takes for whole, and the same command then completes it."""
    fs, local, kind = *store, "lucene_bm25"
    corpus, url = local.parent / "psgs_w100.tsv", "s3://bench/built-there"
    here = build_shards(corpus, tmp_path / "here", kind, {}, 2, registry=installed_registry())
    args = ["index", "build", "--corpus", str(corpus), "--retriever", kind, "--out", url, "--shards", "2"]
    built = cli_here(*args, "--ray", ray_cluster.address, "--no-progress")
    assert built.returncode == 0, built.stderr
    assert f"built in {url}/shards-2, no merged index" in built.stdout
    fs.get("bench/built-there/shards-2", str(tmp_path / "got"), recursive=True)
    assert shard_files(tmp_path / "got") == shard_files(here.folder)
    assert set(remote_files(url)) == store_listing(here.folder)  # the build's state removed once published
    build_index(corpus, tmp_path / "one", kind, {}, progress=False, registry=installed_registry())
    whole = load_retriever(kind, {"index": str(tmp_path / "one")}, registry=installed_registry())
    sharded = load_retriever(kind, {"index": url, "shards": 2}, registry=installed_registry())
    try:
        for k in (1, 10, 100):
            assert answers(sharded.search(QUERIES, k)) == answers(whole.search(QUERIES, k))
    finally:
        sharded.close()
        whole.close()
    again = cli_here(*args, "--ray", ray_cluster.address, "--no-progress")
    assert again.returncode != 0 and f"{url}/shards-2/shards.json exists; pass --overwrite" in again.stderr
    with pytest.raises(ConfigError, match="the driver's node was lost"):
        build_shards(corpus, url, kind, {}, 2, registry=installed_registry(), overwrite=True, runner=LostAfterOneShard)
    assert "shards.json" not in remote_files(f"{url}/shards-2")  # no longer whole: never served half written
    with pytest.raises(ConfigError, match="shards-2/shards.json missing"):
        load_retriever(kind, {"index": url, "shards": 2}, registry=installed_registry())
    resumed = build_shards(corpus, url, kind, {}, 2, registry=installed_registry())
    assert resumed.kept == 1 and resumed.folder == f"{url}/shards-2"
    fs.get("bench/built-there/shards-2", str(tmp_path / "again"), recursive=True)
    assert shard_files(tmp_path / "again") == shard_files(here.folder)


def test_dense_shards_built_into_the_store_are_served_from_it_as_the_one_index_answers(store, ray_cluster, tmp_path):
    """`dense` shards built straight into the store (in this process) are served from it: the run reads the
    encoder check's row 0 of shard 0 by ranged reads of its embeddings.npy, the actors fetch their rows; the
    answers are the one index's, ids, order and scores. Its rows 0 and 1 swapped in the store (the same size, a
    readable .npy) are refused by the digests of its blocks the build recorded. (A tiny random encoder: what is
    promised is the store's, not a model's vectors.)"""
    pytest.importorskip("sentence_transformers")
    from support.component_models import tiny_encoder

    fs, local = store
    corpus = local.parent / "psgs_w100.tsv"
    model = tiny_encoder(tmp_path / "encoder", [*WORDS, "title", *map(str, range(17))])  # the passages' words
    options, chunk = {"model": str(model), "batch_size": 8}, 16
    registry = installed_registry()
    build_index(corpus, tmp_path / "one", "dense", options, chunk_size=chunk, progress=False, registry=registry)
    url = "s3://bench/dense-there"
    build_shards(corpus, url, "dense", options, 2, registry=registry, text=TextSettings(chunk_size=chunk))
    whole = load_retriever("dense", {"index": str(tmp_path / "one")}, registry=registry)
    sharded = load_retriever("dense", {"index": url, "shards": 2}, registry=registry)
    try:
        for k in (1, 10):
            assert answers(sharded.search(QUERIES, k)) == answers(whole.search(QUERIES, k))
    finally:
        sharded.close()
        whole.close()
    key = "bench/dense-there/shards-2/000/embeddings.npy"
    held = fs.cat_file(key)
    stream = io.BytesIO(held)
    np.lib.format.read_magic(stream)
    shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
    start, row = stream.tell(), shape[1] * dtype.itemsize
    rows = held[start : start + row], held[start + row : start + 2 * row]
    fs.pipe_file(key, held[:start] + rows[1] + rows[0] + held[start + 2 * row :])  # rows 0 and 1 swapped: same size
    with pytest.raises(ConfigError, match=r"shards-2/000/embeddings.npy: bytes 0\.\.\d+ are not those written .*: "
                       r"it was written over \(damaged\); build it again"):  # fmt: skip
        load_retriever("dense", {"index": url, "shards": 2}, registry=registry)


def test_a_build_lost_mid_way_resumes_on_another_machine_keeping_its_finished_shard(store, ray_cluster, tmp_path,
                                                                                      monkeypatch):  # fmt: skip
    """A shard build into the store keeps its state there (sharding/build/store.py): lost after its first shard,
    it is resumed by `index build --ray` on another machine (a driver with a cache folder of its own, the first
    one's gone) keeping that shard, and ends equal, byte for byte, to a build never cut; no state is left in the
    store, none in the driver's cache."""
    fs, local = store
    corpus, kind = local.parent / "psgs_w100.tsv", "lucene_bm25"
    uncut = build_shards(corpus, tmp_path / "uncut", kind, {}, 3, registry=installed_registry()).folder
    url = "s3://bench/resumed-elsewhere"
    cut_build(corpus, url, kind, monkeypatch, tmp_path)
    args = ["index", "build", "--corpus", str(corpus), "--retriever", kind, "--out", url, "--shards", "3"]
    resumed = cli_here(*args, "--ray", ray_cluster.address, "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed: 1 of 3 shards kept from the interrupted build" in resumed.stdout
    fs.get("bench/resumed-elsewhere/shards-3", str(tmp_path / "got"), recursive=True)
    got = {path.relative_to(tmp_path / "got").as_posix(): path.read_bytes() for path in (tmp_path / "got").rglob("*")
           if path.is_file()}  # fmt: skip
    layout_and_manifest = {"shards.json", "manifest.json"}  # the manifest's times and corpus path differ
    assert {name: held for name, held in got.items() if name not in layout_and_manifest} == {
        path.relative_to(uncut).as_posix(): path.read_bytes()
        for path in uncut.rglob("*")
        if path.is_file() and path.name not in layout_and_manifest
    }
    assert shard_files(tmp_path / "got") == shard_files(uncut)
    assert set(fs.find("bench/resumed-elsewhere")) == {f"bench/resumed-elsewhere/{n}" for n in store_listing(uncut)}
    cached = {path.name for path in (tmp_path / "second-machine").rglob("*") if path.is_file()}
    assert cached == {"manifest.json", "shards.json"}  # the driver's: the index read back as a run reads it, no state


def test_a_docs_store_written_over_in_the_store_fails_its_hits_never_shows_them(store, ray_cluster):
    """Shard 000's docs.jsonl replaced by one of the same size holding other passages: every hit read from it fails
    its search (a RetrievalError, counted failed in a run), the other shards' hits are read as they were."""
    fs, local = store
    folder = local.parent
    url, registry = "s3://bench/swapped", installed_registry()
    build_shards(folder / "psgs_w100.tsv", url, "bm25", {}, 2, registry=registry)
    whole = load_retriever("bm25", {"index": url, "shards": 2}, registry=registry)
    try:
        expected = [[doc.id for doc in row] for row in whole.search(RUN_QUERIES, 3)]
    finally:
        whole.close()
    key = "bench/swapped/shards-2/000/docs.jsonl"
    held = fs.cat_file(key)
    fs.pipe_file(key, held.translate(bytes.maketrans(b"ck", b"kc")))  # the same size: other ids and passages
    sharded = load_retriever("bm25", {"index": url, "shards": 2}, registry=registry)
    try:
        first = sharded.pool.layout.shards[1].start  # shard 000 holds the passages before it
        for query, ids in zip(RUN_QUERIES, expected):
            numbers = [int(doc_id) - 1 for doc_id in ids]  # ids 1..n, in order
            if any(number < first for number in numbers):
                with pytest.raises(RetrievalError, match=r"shards-2/000/docs.jsonl: bytes \d+\.\.\d+ are not those"):
                    sharded.search([query], 3)
            else:
                assert [doc.id for doc in sharded.search([query], 3)[0]] == ids
        assert any(int(doc_id) - 1 < first for ids in expected for doc_id in ids)  # some query met the shard
        assert any(all(int(doc_id) - 1 >= first for doc_id in ids) for ids in expected)  # and some did not
    finally:
        sharded.close()


@pytest.mark.parametrize(("kind", "name"), [("bm25", "docs.jsonl"), ("lucene_bm25", "lucene_bm25/terms.json")])
def test_a_split_indexs_front_file_written_over_in_the_store_is_refused(store, ray_cluster, tmp_path, kind, name):
    """An index split by `index shard` and uploaded: the run fetches the files its front reads (the docs store,
    lucene_bm25's vocabulary) whole and checks every block against the digests the split recorded in shards.json;
    one of the same size holding other bytes is refused in one line naming it, never searched, and a split of an
    earlier ragbench (no digests) is refused with the fix."""
    fs, local = store
    folder = local.parent
    registry, index, url = installed_registry(), tmp_path / "index", f"s3://bench/split-{kind}"
    build_index(folder / "psgs_w100.tsv", index, kind, {}, chunk_size=40, progress=False, registry=registry)
    split_index(index, 2, registry=registry)
    fs.put(str(index), url, recursive=True)
    held = fs.cat_file(f"{url}/{name}")
    fs.pipe_file(f"{url}/{name}", held.translate(bytes.maketrans(b"ck", b"kc")))  # the same size
    with pytest.raises(ConfigError) as refused:
        load_retriever(kind, {"index": url, "shards": 2}, registry=registry).close()
    line = str(refused.value)
    assert "\n" not in line and re.search(rf"{url}/{name}: bytes \d+\.\.\d+ are not those written", line)
    assert "not the file the index was split from (written over) (damaged); upload the whole index folder" in line
    fs.pipe_file(f"{url}/{name}", held)
    layout = json.loads(fs.cat_file(f"{url}/shards-2/shards.json"))
    del layout["front_blocks"]  # as an earlier ragbench split it
    fs.pipe_file(f"{url}/shards-2/shards.json", json.dumps(layout).encode())
    with pytest.raises(ConfigError) as refused:
        load_retriever(kind, {"index": url, "shards": 2}, registry=registry).close()
    line = str(refused.value)
    assert "shards-2/shards.json records no digests of the index's manifest.json, docs.jsonl" in line
    assert "(ragbench index shard --index INDEX --shards 2 --overwrite) and upload its shards-2 folder" in line


def test_shard_actors_start_and_fetch_are_reported_apart_from_the_search_latency(store, ray_cluster, monkeypatch):
    """A run over shards in the store: the pool's start (its actors placed, their shards fetched and loaded, here
    made 100 s longer on the clock every step reads) is results.json's `cost.retrieval.start_seconds` and the
    summary's, never a search step's seconds nor the search latency."""
    fs, local = store
    folder = local.parent
    registry, url = installed_registry(), "s3://bench/timed"
    build_shards(folder / "psgs_w100.tsv", url, "bm25", {}, 2, registry=registry)
    clock, waited = time.perf_counter, [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: clock() + waited[0])
    loaded = ShardPool._loaded

    def slow_fetch(pool, slot, load):
        waited[0] += 100.0  # the shards' fetch, as long as a large index's
        return loaded(pool, slot, load)

    monkeypatch.setattr(ShardPool, "_loaded", slow_fetch)
    data = folder / "nq.jsonl"
    data.write_text("".join(json.dumps({"id": str(i), "question": q, "golden_answers": ["x"]}) + "\n"
                            for i, q in enumerate(RUN_QUERIES)))  # fmt: skip
    results = run(folder, "timed", model="scripted:echo", retriever="bm25", tasks=[TASK], data={TASK: str(data)},
                  system="vanilla", retriever_args={"index": url, "shards": 2})  # fmt: skip
    opened = results["cost"]["retrieval"]["start_seconds"]
    assert opened >= 200  # both actors' shards (the real start adds whatever the machine's load makes it)
    steps = [step for record in samples(folder / "timed", TASK) for step in record["trace"]]
    searched = [step["seconds"] for step in steps if step["kind"] == "retrieval"]
    assert len(searched) == len(RUN_QUERIES) and max(searched) < 100
    assert results["efficiency"][TASK]["latency_seconds"]["search"]["p95"] < 100
    summary = (folder / "timed" / "report.md").read_text()
    shown = f"; retriever opened in {opened:.1f} s before its searches (not in their latency)"
    assert shown in summary, summary

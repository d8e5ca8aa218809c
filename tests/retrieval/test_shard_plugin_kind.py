"""A third-party retriever kind, written against `ragbench.api` alone and registered by its catalogue entry
(`shards: "module:KIND"`), is built shard-parallel by `index build --ray --shards 2` on a Ray cluster and searched on
its shards (`--retriever-arg shards=2`), answering as its one-process index does, and built merged by `index build
--ray` (its blocks) into the very files its one-process build writes: a kind's sharding and parallel build are
found through the plugin contract, not a table of the built-in kinds. The cluster is the tests' shared one
(`ray_cluster`), its workers given the plugin's folder on their path (Ray's runtime_env), as a node started with
the plugin installed has it."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import needs, write_jsonl
from ragbench._retrieval.sharding.build.driver import build_shards
from ragbench._retrieval.sharding.kind_lookup import built_shards_front, sharded_kind
from ragbench.api.retrieval import BuildsBlocks, BuildsShards, Splits
from ragbench.testing import build_index, installed_registry, load_retriever
from support.helpers import cli_here
from support.ray_cluster import SHARED

pytestmark = needs("ray")

HEAD = '''
"""A tiny retriever kind: a passage's score is how many of the query's words it holds (ties: corpus order)."""

import json

import numpy as np

from ragbench.api import Document, hookimpl
from ragbench.api.retrieval import (
    BuildsBlocks, BuildsShards, BuiltShardsFront, IndexBuilder, Retriever, ShardSearcher, from_json_array, json_array,
)

ROWS = "overlap.json"


def top_k(rows, query, k):
    words = set(query.lower().split())
    scores = np.array([float(len(words & set(row))) for row in rows], dtype=np.float32)
    order = np.lexsort((np.arange(len(rows)), -scores))[:k]
    order = order[scores[order] > 0]
    return scores[order], order


class OverlapBuilder(IndexBuilder):
    def __init__(self, folder, **options):
        super().__init__(folder)
        self.rows, self.texts = [], []

    def add(self, texts):
        self.rows += [sorted(set(text.lower().split())) for text in texts]
        self.texts += texts

    def finish(self):
        (self.folder / ROWS).write_text(json.dumps({"rows": self.rows, "texts": self.texts}))
        return {}


class Overlap(Retriever):
    name = "overlap"
    builder = OverlapBuilder

    def __init__(self, index=None):
        data = json.loads((__import__("pathlib").Path(index) / ROWS).read_text())
        self.rows, self.texts = data["rows"], data["texts"]

    def search(self, queries, k):
        found = [top_k(self.rows, query, k) for query in queries]
        return [[Document(None, "", self.texts[i], score=float(s)) for s, i in zip(*hits)] for hits in found]


class OverlapPart(OverlapBuilder):
    def analysed(self):
        (self.folder / ROWS).write_text(json.dumps({"rows": self.rows}))
        return {"passages": len(self.rows)}


class OverlapSearch(ShardSearcher):
    def load(self):
        self.rows = json.loads((self.shard.folder / ROWS).read_text())["rows"]
        self.expect(ROWS, len(self.rows))

    def ranked(self, payload, k):
        return [top_k(self.rows, query, k) for query in payload]


class OverlapFront(BuiltShardsFront):
    name = "overlap"

    def payload(self, queries):
        return queries

    def shard_options(self):
        return {}


class OverlapWorker:
    def arrays(self, texts):
        part = OverlapBuilder(None)
        part.add(texts)
        return {"rows": json_array(part.rows), "texts": json_array(part.texts)}

'''
BUILD = """
    def part_builder(self, folder):
        return OverlapPart(folder)

    def merge(self, stats):
        return {"passages": sum(part["passages"] for part in stats)}

    def finish(self, folder, shared, own):
        (folder / "counts.json").write_text(json.dumps({"corpus": shared["passages"], "shard": own["passages"]}))

    def options(self, shared):
        return {"passages": shared["passages"]}
"""
BLOCKS = """
    def settings(self, builder, first, registry):
        return {}

    def worker(self, settings):
        return OverlapWorker()

    def absorb(self, builder, arrays):
        builder.rows += from_json_array(arrays["rows"])
        builder.texts += from_json_array(arrays["texts"])
"""
HOOK = """
@hookimpl
def ragbench_catalog():
    entry = {"target": "overlap_plugin:Overlap", "shards": "overlap_plugin:KIND", "description": "word overlap"}
    return {"retrievers": {"overlap": entry}}
"""
PLUGIN = f"""{HEAD}
class OverlapKind(BuildsShards, BuildsBlocks):
    name, front, search, shards_front, fields = "overlap", OverlapFront, OverlapSearch, OverlapFront, ("rows", "texts")
{BUILD}{BLOCKS}

KIND = OverlapKind()
{HOOK}"""  # a kind: one ShardedKind subclass, what it can do declared by its bases
WORDS = ["river", "king", "queen", "castle", "song", "winter", "moses", "sang"]
QUERIES = ["river king", "the song of the queen", "winter moses sang castle", "castle", "zzz"]


@pytest.fixture(scope="module")
def site(tmp_path_factory, ray_cluster) -> Iterator[Path]:
    """The plugin (PLUGIN) laid out as pip installs it, in a folder on the path of the shared Ray cluster's workers:
    this process joins it again with that path for them, whichever fixture joined it first."""
    site = tmp_path_factory.mktemp("site")
    (site / "overlap_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = site / "overlap_plugin-0.0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: overlap-plugin\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text("[ragbench]\noverlap_plugin = overlap_plugin\n")
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    with SHARED.workers_environment({"PYTHONPATH": path}):
        SHARED.joined()
        yield site


@pytest.fixture
def plugin(site, monkeypatch, request) -> Path:
    """The plugin on this process's path."""
    sys.modules.pop("overlap_plugin", None)  # this text's module, not one an earlier test imported
    request.addfinalizer(lambda: sys.modules.pop("overlap_plugin", None))
    monkeypatch.syspath_prepend(str(site))
    return site


def test_a_plugin_kind_is_built_on_ray_in_shards_and_answers_as_its_one_index(ray_cluster, plugin, tmp_path):
    docs = [{"id": f"p{i:02d}", "text": " ".join(WORDS[i % 8 : i % 8 + 1 + i % 3] + [f"w{i}"])} for i in range(24)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    out = tmp_path / "built"
    done = cli_here("index", "build", "--corpus", str(corpus), "--retriever", "overlap", "--out", str(out), "--ray",
                    ray_cluster.address, "--shards", "2", "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "2 shards of" in done.stdout and sorted(path.name for path in out.iterdir()) == ["shards-2"]
    registry = installed_registry()
    build_index(corpus, tmp_path / "one", "overlap", {}, progress=False, registry=registry)
    whole = load_retriever("overlap", {"index": str(tmp_path / "one")}, registry=registry)
    sharded = load_retriever("overlap", {"index": str(out), "shards": 2}, registry=registry)
    try:
        found, expected = sharded.search(QUERIES, 5), whole.search(QUERIES, 5)
    finally:
        sharded.close()
    ids = {doc["text"]: doc["id"] for doc in docs}
    assert [[(d.text, d.score) for d in hits] for hits in found] == [[(d.text, d.score) for d in h] for h in expected]
    assert [[d.id for d in hits] for hits in found] == [[ids[d.text] for d in hits] for hits in expected]
    assert sum(map(len, expected)) > 10 and sharded.metadata()["shards"] == 2


def test_a_plugin_kind_is_built_merged_on_ray_into_its_one_process_index(ray_cluster, plugin, tmp_path):
    docs = [{"id": f"p{i:02d}", "text": " ".join(WORDS[i % 8 : i % 8 + 1 + i % 3] + [f"w{i}"])} for i in range(24)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    done = cli_here("index", "build", "--corpus", str(corpus), "--retriever", "overlap", "--out",
                    str(tmp_path / "built"), "--ray", ray_cluster.address, "--workers", "2", "--chunk-size", "5",
                    "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "overlap index of 24 passages" in done.stdout, done.stdout
    build_index(corpus, tmp_path / "one", "overlap", {}, progress=False, registry=installed_registry())
    assert (tmp_path / "built" / "overlap.json").read_bytes() == (tmp_path / "one" / "overlap.json").read_bytes()
    assert json.loads((tmp_path / "built" / "manifest.json").read_text())["doc_count"] == 24


def test_index_build_help_names_every_kind_registered_a_plugins_too(plugin):
    """`index build --help` reads the kinds from the registry: each built-in kind with an index (lucene_bm25 among
    them, the page indexes too) and the plugin's, for --retriever, --ray and --shards alike."""
    shown = cli_here("index", "build", "--help")
    assert shown.returncode == 0, shown.stderr
    kinds, text = "bm25, lucene_bm25, flashrag_bm25, dense, overlap", " ".join(shown.stdout.split())  # unwrapped
    built = "bm25, lucene_bm25, flashrag_bm25, dense, colpali, siglip, overlap"  # and the page indexes
    assert f"--retriever TEXT the retriever whose index to build: {built} (ragbench list retrievers)" in text
    assert f"--ray [ADDRESS] analyse the passages on a pool of Ray actors ({kinds})" in text
    assert f"--shards INTEGER with --ray: build the index ({kinds}, colpali, siglip) as S shards" in text


def test_a_plugin_kind_is_built_in_shards_that_answer_as_its_one_index(plugin, tmp_path):
    """The kind (one `ShardedKind` subclass), built in shards in this process: the shards, searched apart and
    merged by the kind's front, answer as its one-process index."""
    docs = [{"id": f"p{i:02d}", "text": " ".join(WORDS[i % 8 : i % 8 + 1 + i % 3] + [f"w{i}"])} for i in range(24)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    registry = installed_registry()
    kind = sharded_kind(registry, "overlap")
    assert isinstance(kind, BuildsShards) and isinstance(kind, BuildsBlocks) and not isinstance(kind, Splits)
    build_shards(corpus, tmp_path / "built", "overlap", {}, 3, registry=registry)
    front = built_shards_front(kind, str(tmp_path / "built"), 3)(str(tmp_path / "built"), 3)  # type: ignore[misc]
    try:
        layout = front.layout(3)
        found = [kind.search(shard, front.shard_options()).top_k(front.payload(QUERIES), 5) for shard in layout.shards]
        answers = front.answers(QUERIES, found, 5)
    finally:
        front.close()
    build_index(corpus, tmp_path / "one", "overlap", {}, progress=False, registry=registry)
    expected = load_retriever("overlap", {"index": str(tmp_path / "one")}, registry=registry).search(QUERIES, 5)
    assert [[(d.text, d.score) for d in hits] for hits in answers] == [[(d.text, d.score) for d in h] for h in expected]
    assert sum(map(len, expected)) > 10

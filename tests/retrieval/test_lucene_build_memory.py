"""What a `lucene_bm25` build task holds beyond its part (issue 90): texts are analysed a bounded block at a time,
whatever --chunk-size reads at once, into the same index (a block's tokens are held as strings: a chunk of 50,000
passages held a few hundred MB); the analyzer keeps a bounded number of terms however many distinct tokens it meets
(it kept 2^18 tokens and as many stems, ~80 MB, for as long as a Ray worker lived); and a shard's last step holds
the corpus's vocabulary once, not a dict of it, a list of places and its JSON text beside it (tracemalloc's count of
what it allocates, the same on every run: no timing)."""

from __future__ import annotations

import json
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import needs, write_jsonl
from ragbench._retrieval.lucene import analyzer, porter_stemmer, postings, retriever, tokenizer
from ragbench._retrieval.lucene.analyzer import TERMS_CACHED
from ragbench._retrieval.lucene.postings import analysed_postings
from ragbench._retrieval.sharding.build import driver
from ragbench._retrieval.sharding.build.driver import build_shards
from ragbench._storage import json_list
from ragbench.testing import build_index, installed_registry

pytestmark = needs("regex")
REGISTRY = installed_registry()
WORDS = ["river", "kings", "the", "Stra\u00dfe", "\u6771\u4eac", "running", "x", "caf\u00e9s", "of", "it's"]
texts = st.lists(st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join), min_size=1, max_size=30)


def index_files(folder: Path) -> dict[str, bytes]:
    """The index's files, the manifest without its build's times."""
    files = {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    manifest = json.loads(files.pop("manifest.json"))
    files["manifest.json"] = json.dumps({k: v for k, v in manifest.items() if k not in ("build_seconds", "built_at")})
    return files


@settings(max_examples=25, deadline=None)
@given(texts, st.integers(1, 150))
def test_texts_are_analysed_a_bounded_block_at_a_time_into_the_same_index(passages, characters):
    analysed = []
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        corpus = write_jsonl(
            Path(tmp) / "corpus.jsonl", [{"id": str(n), "contents": t} for n, t in enumerate(passages)]
        )
        build_index(corpus, Path(tmp) / "whole", "lucene_bm25", {}, progress=False, registry=REGISTRY)
        patch.setattr(retriever, "ANALYSED_AT_ONCE", characters)
        patch.setattr(retriever, "analysed_postings", lambda block: analysed.append(block) or analysed_postings(block))
        build_index(corpus, Path(tmp) / "blocks", "lucene_bm25", {}, progress=False, registry=REGISTRY)
        assert index_files(Path(tmp) / "blocks") == index_files(Path(tmp) / "whole")
    assert [text for block in analysed for text in block] == passages
    assert all(len(block) == 1 or sum(map(len, block)) <= characters for block in analysed)


def held_terms() -> int:
    """The entries of every functools cache of the analyzer's modules."""
    caches = {id(f): f for m in (analyzer, porter_stemmer, postings, tokenizer) for f in vars(m).values()}
    return sum(f.cache_info().currsize for f in caches.values() if hasattr(f, "cache_info"))


def test_the_analyzer_keeps_a_bounded_number_of_terms_whatever_the_vocabulary():
    before = held_terms()
    tokens = [f"zq{number}ing" for number in range(3 * TERMS_CACHED)]
    for start in range(0, len(tokens), 2000):
        analysed_postings([" ".join(tokens[start : start + 2000])])
    assert held_terms() - before <= TERMS_CACHED


def test_a_shards_last_step_holds_the_vocabulary_once(tmp_path, monkeypatch):
    """4 shards of 40,000 distinct terms: each last step's peak of allocations, a term of the corpus's vocabulary,
    is under 160 bytes (218 when it built a dict of the whole vocabulary and encoded terms.json at once; the
    vocabulary's own strings and the list of them ~65)."""
    terms, shards = 40_000, 4
    corpus = tmp_path / "corpus.jsonl"
    with open(corpus, "w") as handle:
        for number in range(terms // 10):
            words = " ".join(f"zq{number * 10 + k}x" for k in range(10))
            handle.write(json.dumps({"id": str(number), "contents": words}) + "\n")
    peaks = []

    def measured(*call):
        tracemalloc.start()
        try:
            return finish_part(*call)
        finally:
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()

    finish_part = driver.finish_part
    monkeypatch.setattr(driver, "finish_part", measured)
    monkeypatch.setattr(json_list, "SLICE", 1000)  # terms.json a slice at a time, as a vocabulary of millions is
    if tracemalloc.is_tracing():
        pytest.skip("tracemalloc is already tracing this process")
    build_shards(corpus, tmp_path / "index", "lucene_bm25", {}, shards, registry=installed_registry())
    assert len(peaks) == shards
    assert max(peaks) / terms < 160, [round(peak / terms) for peak in peaks]

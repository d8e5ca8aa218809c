"""What a `lucene_bm25` build task holds beyond its part (issue 90): the analyzer keeps a bounded number of terms
however many distinct tokens it meets (it kept 2^18 tokens and as many stems, ~80 MB, for as long as a Ray worker
lived), and a shard's last step holds the corpus's vocabulary once, not a dict of it, a list of places and its JSON
text beside it (tracemalloc's count of what it allocates, the same on every run: no timing)."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from conftest import needs
from ragbench._retrieval.lucene import analyzer, porter_stemmer, postings, tokenizer
from ragbench._retrieval.lucene.analyzer import TERMS_CACHED
from ragbench._retrieval.lucene.postings import analysed_postings
from ragbench._retrieval.shard_build import driver
from ragbench._retrieval.shard_build.driver import build_shards
from ragbench._storage import json_list
from ragbench.testing import installed_registry

pytestmark = needs("regex")


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

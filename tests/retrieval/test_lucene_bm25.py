"""lucene_bm25 against pyserini itself: the analysis of 3,006 generated strings and of every 37th code point in five
contexts (8,570 strings in all), and the top 10 (ids, order, scores) of 474 queries over three generated corpora (English with numbers, URLs, e-mail addresses and possessives; many
scripts and emoji; both), recorded from pyserini 1.6.0 by tests/data/lucene_bm25/record_pyserini.py; plus the
properties of the analyzer and the scoring that hold for any text."""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA, write_jsonl
from ragbench._retrieval.lucene import unicode9
from ragbench._retrieval.lucene.analyzer import ENGLISH_STOP_WORDS, analyze
from ragbench._retrieval.lucene.retriever import (
    LENGTH_TABLE,
    LuceneBM25Retriever,
    anserini_scores,
    length_to_norm,
    norm_to_length,
)
from ragbench._retrieval.lucene.tokenizer import standard_tokens, utf16_units
from ragbench.api import ConfigError
from ragbench.testing import build_index, installed_registry
from support import paths
from support.helpers import cli_here

pytest.importorskip("regex")

RECORDED = json.loads((TEST_DATA / "lucene_bm25" / "pyserini.json").read_text(encoding="utf-8"))
CORPORA = sorted(RECORDED["corpora"])


def build(tmp: Path, docs: list[dict]) -> LuceneBM25Retriever:
    corpus = write_jsonl(tmp / "corpus.jsonl", docs)
    build_index(  # chunks of 64 passages: postings merged across chunks
        corpus, tmp / "index", "lucene_bm25", chunk_size=64, title=False, progress=False, registry=installed_registry()
    )
    return LuceneBM25Retriever(str(tmp / "index"))


@pytest.fixture(scope="module", params=CORPORA)
def recorded_corpus(request, tmp_path_factory):
    corpus = RECORDED["corpora"][request.param]
    docs = [{"id": doc["id"], "text": doc["contents"]} for doc in corpus["docs"]]
    return corpus, build(tmp_path_factory.mktemp(request.param), docs)


def test_the_unicode9_tables_read_from_their_data_file_are_those_recorded():
    """unicode9_ranges.txt holds the ranges that unicode9.py held as Python until they moved there: the same
    808 and 100 ranges (their digests taken before the move)."""
    for table, count, digest in (
        (unicode9.OTHER_RANGES, 808, "5260747170063a02b85fb323627fa78e91381e73ea4f8bf783894d02d5502239"),
        (unicode9.PICTOGRAPHIC_RANGES, 100, "5174fb97f01de010bf4cd9edf2c90595d1f03268c985ff4d4ebf1ea8c39233fc"),
    ):
        assert (len(table), hashlib.sha256(repr(table).encode()).hexdigest()) == (count, digest)


def test_the_analysis_of_every_recorded_string_is_pyserinis():
    wrong = [(text, terms) for text, terms in RECORDED["analysis"] if analyze(text) != terms]
    assert wrong == []


def test_every_recorded_query_gets_pyserinis_ids_order_and_scores(recorded_corpus):
    corpus, retriever = recorded_corpus
    k = RECORDED["k"]
    found = [[[doc.id, doc.score] for doc in hits] for hits in retriever.search(corpus["queries"], k)]
    wrong = [(query, hits, got) for query, hits, got in zip(corpus["queries"], corpus["hits"], found) if got != hits]
    assert wrong == []


def test_a_query_with_no_terms_gets_no_hits_as_from_pyserini(recorded_corpus):
    _, retriever = recorded_corpus
    assert retriever.search(["", "the of and", "?!", "zzzunknownzzz"], 10) == [[], [], [], []]


def test_a_search_for_no_passages_gets_none(tmp_path):
    """k 0 asks for no passage: none, as every other kind answers (numpy's partition refused a kth of 0 hits)."""
    retriever = build(tmp_path, [{"id": "a", "text": "river king"}, {"id": "b", "text": "king of the river"}])
    assert retriever.search(["river king", "zzz"], 0) == [[], []]


def test_lengths_below_24_are_exact_and_norms_decode_and_encode_back():
    assert [norm_to_length(length_to_norm(n)) for n in range(24)] == list(range(24))
    assert all(length_to_norm(norm_to_length(norm)) == norm for norm in range(256))
    assert list(LENGTH_TABLE[24:34]) == [24, 25, 26, 27, 28, 29, 30, 31, 32, 33]  # 24 + 4 significant bits
    assert norm_to_length(length_to_norm(1000)) == 984  # 24 + 960


def test_ties_and_near_ties_are_rounded_and_lowered_as_anserini_does():
    raw = np.array([2.00004, 2.00001, 2.0, 1.5, 1.49995], dtype=np.float32)
    assert anserini_scores(raw) == [
        float(np.float32(2.0)),
        float(np.float32(np.float32(2.0) - np.float32(1e-6))),
        float(np.float32(np.float32(2.0) - np.float32(2e-6))),
        float(np.float32(1.5)),
        float(np.float32(np.float32(1.5) - np.float32(1e-6))),
    ]


def rewrite(files: Path, name: str, change) -> None:
    """The array `name` of the index's files, changed by `change` and saved again."""
    array = np.load(files / name)
    change(array)
    np.save(files / name, array)


@pytest.mark.parametrize(
    "damage,message",
    [
        (lambda files: np.save(files / "norms.npy", np.zeros(1, dtype=np.uint8)), "norms.npy: holds 1 numbers where 2"),
        (lambda files: (files / "postings.npy").write_bytes(b""), "postings.npy: not a readable .npy array"),
        (lambda files: (files / "freqs.npy").unlink(), "freqs.npy: missing"),
        (lambda files: (files / "terms.json").write_text('["fox"]'), "terms.json: holds 1 terms where manifest.json"),
        (lambda files: (files / "terms.json").write_text('{"fox": 0}'), "terms.json: is not a list of words"),
        (lambda files: (files / "terms.json").write_text('["fox", "dog"]'), "terms.json: its words are not distinct"),
        (
            lambda files: rewrite(files, "postings.npy", lambda a: a.__setitem__(0, -1)),
            "postings.npy: passage number -1",
        ),
        (lambda files: rewrite(files, "postings.npy", lambda a: a.__setitem__(0, 7)), "postings.npy: passage number 7"),
        (lambda files: rewrite(files, "freqs.npy", lambda a: a.__setitem__(1, 0)), "freqs.npy: term frequency 0"),
        (
            lambda files: rewrite(files, "offsets.npy", lambda a: a.__setitem__(1, 2)),
            "offsets.npy: offset 2 at position 2",
        ),
        (
            lambda files: rewrite(files, "id_ranks.npy", lambda a: a.__setitem__(1, 0)),
            "id_ranks.npy: gives two passages",
        ),
    ],
)
def test_a_damaged_index_file_is_named_with_the_command_that_builds_it_again(tmp_path, damage, message):
    build(tmp_path, [{"id": "a", "text": "fox"}, {"id": "b", "text": "dog"}])
    damage(tmp_path / "index" / "lucene_bm25")
    with pytest.raises(ConfigError, match=f"lucene_bm25/{re.escape(message)}.*ragbench index build --corpus"):
        LuceneBM25Retriever(str(tmp_path / "index"))


def test_the_shards_front_refuses_an_index_of_segments_built_as_title_and_segment(tmp_path):
    """An index of MS MARCO V2.1 segments built before a segment was indexed as Anserini's (its manifest without
    `segment_text`): the query side of a search through shards refuses it as a run on one machine does
    (tests/tasks/trec_rag/test_trec_rag24_reproduction.py), naming the command that builds it again."""
    from ragbench._retrieval.sharding.lucene_bm25.front import LuceneFront

    index = tmp_path / "old_lucene"
    build_index(paths.DATA / "trec_rag24_sample" / "msmarco_v2.1_doc_segmented", index, "lucene_bm25", progress=False)
    manifest = json.loads((index / "manifest.json").read_text())
    del manifest["options"]["segment_text"]
    (index / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match="not as Anserini does.*ragbench index build --corpus"):
        LuceneFront(str(index))


def test_k1_and_b_are_lucenes_set_bm25(tmp_path):
    texts = ["fox fox dog", "fox cat cat cat cat bank", "dog", "fox"]
    retriever = build(tmp_path, [{"id": f"p{n}", "text": text} for n, text in enumerate(texts)])
    tuned = LuceneBM25Retriever(str(tmp_path / "index"), k1=1.2, b=0.75)
    expected = reference_scores(texts, "fox dog", k1=1.2, b=0.75)
    ranked = sorted(expected, key=lambda doc: (-expected[doc], doc))
    assert [hit.id for hit in tuned.search(["fox dog"], 4)[0]] == [f"p{doc}" for doc in ranked]
    assert [hit.score for hit in tuned.search(["fox dog"], 4)[0]] == anserini_scores(
        np.array([expected[doc] for doc in ranked], dtype=np.float32)
    )
    assert tuned.search(["fox dog"], 4) != retriever.search(["fox dog"], 4)


TEXT = st.lists(
    st.one_of(
        st.sampled_from(list("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 _.,:;'’-/@#\n")),
        st.sampled_from(["the", "fox's", "running", "3.14", "http://a.b/c", "日本", "ひら", "ภาษา", "😀", "👍🏽", "é"]),
        st.characters(codec="utf-8"),
    )
).map("".join)


@settings(max_examples=100, deadline=None)
@given(TEXT, TEXT)
def test_text_either_side_of_a_space_is_analysed_apart(left, right):
    assert analyze(left + " " + right) == analyze(left) + analyze(right)


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_terms_are_lower_case_non_stop_words_of_at_most_255_utf16_units(text):
    for token in standard_tokens(text):
        assert 1 <= utf16_units(token) <= 255 and not any(char.isspace() for char in token)
    for term in analyze(text):
        assert term not in ENGLISH_STOP_WORDS and term == term.lower()


WORDS = st.sampled_from("fox foxes dog dogs run running ran the a cat cats bank banks 42 3.14".split())
DOCS = st.lists(st.lists(WORDS, max_size=30).map(" ".join), min_size=1, max_size=25)


def reference_scores(texts: list[str], query: str, k1: float = 0.9, b: float = 0.4) -> dict[int, float]:
    """BM25Similarity one passage and one term at a time, in float32 scalars (the retriever's arrays must agree)."""
    f32 = np.float32
    terms = [Counter(analyze(text)) for text in texts]
    with_terms = sum(1 for counts in terms if counts)
    avgdl = f32(sum(sum(c.values()) for c in terms) / with_terms) if with_terms else f32(1)
    totals: dict[int, float] = {}
    for word, count in Counter(analyze(query)).items():
        df = sum(1 for counts in terms if word in counts)
        if df == 0:
            continue
        weight = f32(count) * f32(math.log(1 + (with_terms - df + 0.5) / (df + 0.5)))
        for doc, counts in enumerate(terms):
            if word in counts:
                length = LENGTH_TABLE[length_to_norm(sum(counts.values()))]
                cache = f32(1) / (f32(k1) * ((f32(1) - f32(b)) + f32(b) * length / avgdl))
                score = weight - weight / (f32(1) + f32(counts[word]) * cache)
                totals[doc] = totals.get(doc, 0.0) + float(score)
    return {doc: float(f32(total)) for doc, total in totals.items()}


@settings(max_examples=25, deadline=None)
@given(DOCS, st.lists(WORDS, min_size=1, max_size=5).map(" ".join), st.randoms(use_true_random=False))
def test_hits_are_the_best_scores_with_ties_in_id_order(tmp_path_factory, texts, query, rng):
    ids = [f"p{n}" for n in range(len(texts))]
    rng.shuffle(ids)
    retriever = build(tmp_path_factory.mktemp("prop"), [{"id": i, "text": t} for i, t in zip(ids, texts)])
    expected = reference_scores(texts, query)
    ranked = sorted(expected, key=lambda doc: (-expected[doc], ids[doc]))[:5]
    hits = retriever.search([query], 5)[0]
    assert [hit.id for hit in hits] == [ids[doc] for doc in ranked]
    raw = np.array([expected[doc] for doc in ranked], dtype=np.float32)
    assert [hit.score for hit in hits] == anserini_scores(raw)
    retriever.close()


def test_index_build_on_the_command_line_then_search_with_k1_and_b(tmp_path):
    corpus = write_jsonl(
        tmp_path / "corpus.jsonl",
        [{"id": "b", "title": "Foxes", "text": "The fox's den."}, {"id": "a", "title": "Dogs", "text": "A dog."}],
    )
    out = tmp_path / "idx"
    args = ["index", "build", "--corpus", str(corpus), "--retriever", "lucene_bm25", "--out", str(out)]
    result = cli_here(*args, "--no-progress")
    assert result.returncode == 0, result.stderr
    assert f"lucene_bm25 index of 2 passages in {out}" in result.stdout
    hits = LuceneBM25Retriever(str(out), k1=1.2, b=0.75).search(["foxes"], 5)[0]  # the title is indexed too
    assert [hit.id for hit in hits] == ["b"] and hits[0].text == "The fox's den."
    refused = cli_here(*args, "--overwrite", "--build-arg", "k1=1.2", "--no-progress")
    assert refused.returncode == 2 and refused.stderr.strip().splitlines() == [
        "ragbench: error: --build-arg k1=1.2: index build --retriever lucene_bm25 has no option 'k1' (it takes no "
        "options)"
    ], refused.stderr


def test_without_the_regex_package_the_build_is_refused_before_the_corpus_is_read(tmp_path, monkeypatch):
    from ragbench._retrieval.lucene.tokenizer import token_regex

    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"id": "a", "text": "fox"}])
    token_regex.cache_clear()
    monkeypatch.setitem(sys.modules, "regex", None)  # `import regex` raises ImportError
    try:
        with pytest.raises(ConfigError, match=r"needs the regex package .*pip install 'ragbench\[retrieval\]'"):
            build_index(corpus, tmp_path / "index", "lucene_bm25", progress=False, registry=installed_registry())
    finally:
        token_regex.cache_clear()
    assert not (tmp_path / "index").exists()


@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("small")
    build(tmp, [{"id": "a", "text": "fox fox dog"}, {"id": "b", "text": "the"}, {"id": "c", "text": "cat dog"}])
    return tmp / "index"


COUNTS = ("doc_count", "terms", "postings", "docs_with_terms", "total_terms")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(COUNTS), st.one_of(st.integers(-3, 12), st.integers(-(2**63), 2**63)))
def test_a_manifest_count_other_than_the_files_is_refused_before_a_search(small_index, field, value):
    path = small_index / "manifest.json"
    written = path.read_text(encoding="utf-8")
    manifest = json.loads(written)
    counts = {"doc_count": manifest["doc_count"], **manifest["options"]}
    assert {name: counts[name] for name in COUNTS} == dict(zip(COUNTS, [3, 3, 4, 2, 5]))  # as built
    if value == counts[field]:
        return
    if field == "doc_count":
        manifest[field] = value
    else:
        manifest["options"][field] = value
    path.write_text(json.dumps(manifest), encoding="utf-8")
    try:
        with pytest.raises(ConfigError) as refused:
            LuceneBM25Retriever(str(small_index))
    finally:
        path.write_text(written, encoding="utf-8")
    message = str(refused.value)
    assert "\n" not in message and "manifest.json" in message and "ragbench index build --corpus" in message


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("docs_with_terms", 0, "norms.npy: holds 2 passages with terms where manifest.json's docs_with_terms says 0"),
        ("docs_with_terms", 3, "norms.npy: holds 2 passages with terms where manifest.json's docs_with_terms says 3"),
        ("total_terms", -5, "freqs.npy: holds 5 term occurrences where manifest.json's total_terms says -5"),
        ("total_terms", 4000, "freqs.npy: holds 5 term occurrences where manifest.json's total_terms says 4000"),
    ],
)
def test_the_counts_scores_are_made_of_are_those_of_the_files(small_index, field, value, message):
    path = small_index / "manifest.json"
    written = path.read_text(encoding="utf-8")
    manifest = json.loads(written)
    path.write_text(json.dumps({**manifest, "options": {**manifest["options"], field: value}}), encoding="utf-8")
    try:
        with pytest.raises(ConfigError, match=f"lucene_bm25/{re.escape(message)} .*ragbench index build --corpus"):
            LuceneBM25Retriever(str(small_index))
    finally:
        path.write_text(written, encoding="utf-8")
    assert [hit.id for hit in LuceneBM25Retriever(str(small_index)).search(["dog"], 5)[0]] == ["c", "a"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aeiouybcdlstwxyz", min_size=1, max_size=12), st.data())
def test_the_stemmers_measure_counts_the_vowel_consonant_sequences_of_the_stem(word, data):
    """Porter's m of [C](VC)^m[V]: a vowel followed by a consonant, counted in the stem b[0..j] ("y" after a
    consonant is a vowel)."""
    from ragbench._retrieval.lucene.porter_stemmer import _Word

    state = _Word(list(word))
    state.j = data.draw(st.integers(0, len(word) - 1))
    kinds = "".join("c" if state.cons(i) else "v" for i in range(state.j + 1))
    assert state.m() == kinds.count("vc")

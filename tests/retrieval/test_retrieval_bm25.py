"""BM25: the streaming, chunked build gives exactly bm25s's index; memory-mapped search; clear errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import needs
from ragbench.api import ConfigError, Document
from ragbench.api.retrieval import passage_text
from ragbench.testing import build_index, installed_registry, load_retriever
from support.retrieval_samples import passages, write_dpr_tsv

pytestmark = needs("bm25s", "Stemmer")  # not imported while the tests are collected
REGISTRY = installed_registry()

QUERIES = ["king queen castle", "running river", "Moses the prophet", "the a of", "zzz unknown words", "song"]
DOCS = passages(300)
METHODS = ["lucene", "robertson", "atire", "bm25l", "bm25+"]  # --build-arg method=..., bm25s's


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_dpr_tsv(tmp_path_factory.mktemp("corpus") / "psgs_w100.tsv", DOCS)


def build(corpus, out, chunk_size=37, **options):
    """`ragbench index build --kind bm25` of `corpus` into `out`, and the retriever `--retriever bm25
    --retriever-arg index=OUT` searches."""
    build_index(corpus, out, "bm25", options, chunk_size=chunk_size, progress=False, registry=REGISTRY)
    return load_retriever("bm25", {"index": str(out)}, registry=REGISTRY)


def bm25s_directly(texts, method="lucene", k1=0.9, b=0.4, stemmer="porter"):
    """bm25s as its README uses it, on the whole corpus in memory."""
    import bm25s
    import Stemmer

    stem = Stemmer.Stemmer(stemmer)
    retriever = bm25s.BM25(k1=k1, b=b, method=method)
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False), show_progress=False)
    query_tokens = bm25s.tokenize(QUERIES, stopwords="en", stemmer=stem, return_ids=False, show_progress=False)
    return retriever, query_tokens


@pytest.mark.parametrize("method", METHODS)
def test_streaming_build_scores_every_passage_exactly_as_bm25s(corpus, tmp_path, method):
    ours = build(corpus, tmp_path / "index", method=method, k1=1.2, b=0.7, stemmer="english")
    reference, query_tokens = bm25s_directly([passage_text(d) for d in DOCS], method, 1.2, 0.7, "english")
    for tokens in query_tokens:
        if tokens:
            assert np.array_equal(ours.bm25.get_scores(tokens), reference.get_scores(tokens))


def test_search_returns_bm25s_top_k_ties_by_passage_number_with_ids_titles_texts_and_scores(corpus, tmp_path):
    ours = build(corpus, tmp_path / "index")
    reference, query_tokens = bm25s_directly([passage_text(d) for d in DOCS])
    _, expected_scores = reference.retrieve(query_tokens, k=10, show_progress=False)
    hits = ours.search(QUERIES, 10)
    for row, tokens, scores in zip(hits, query_tokens, expected_scores):
        if not tokens:  # "the a of": no word left to search with
            assert row == []
            continue
        every = reference.get_scores(tokens)
        ids = sorted(range(len(DOCS)), key=lambda i: (-every[i], i))[:10]  # as Lucene: ties by document number
        ids = [i for i in ids if every[i] > 0]  # bm25s's padding with passages that match no word left out
        assert [doc.id for doc in row] == [DOCS[i].id for i in ids]
        assert [doc.score for doc in row] == scores.tolist()[: len(ids)]
        assert [(doc.title, doc.text) for doc in row] == [(DOCS[i].title, DOCS[i].text) for i in ids]


def test_tied_passages_come_in_corpus_order_whatever_bm25s_top_k_backend(tmp_path, monkeypatch):
    import bm25s

    corpus = write_dpr_tsv(
        tmp_path / "c.tsv",
        [Document(id=f"p{i}", title="", text="alpha beta" if i % 2 else "gamma") for i in range(200)],
    )
    retriever = build(corpus, tmp_path / "index")
    expected = [f"p{i}" for i in range(1, 200, 2)]
    assert [doc.id for doc in retriever.search(["alpha"], 100)[0]] == expected
    assert [doc.id for doc in retriever.search(["alpha"], 7)[0]] == expected[:7]
    assert [doc.id for doc in retriever.search(["alpha delta"], 3)[0]] == ["p1", "p3", "p5"]
    assert [doc.id for doc in retriever.search(["gamma"], 102)[0]] == [f"p{i}" for i in range(0, 200, 2)]  # no more
    monkeypatch.setattr(bm25s.selection, "_topk_numpy", lambda scores, k, sorted: (scores[:k], np.arange(k)))
    assert [doc.id for doc in retriever.search(["alpha"], 7)[0]] == expected[:7]  # not bm25s's selection


def test_build_sees_the_corpus_in_chunks_never_whole(corpus, tmp_path, monkeypatch):
    sizes = []
    builder = REGISTRY.load("retrievers", "bm25").builder  # the class `index build --kind bm25` builds with
    original = builder.add
    monkeypatch.setattr(builder, "add", lambda self, texts: sizes.append(len(texts)) or original(self, texts))
    build(corpus, tmp_path / "index", chunk_size=64)
    assert sizes == [64, 64, 64, 64, 44]


def test_chunk_size_does_not_change_the_index(corpus, tmp_path):
    small = build(corpus, tmp_path / "small", chunk_size=7)
    whole = build(corpus, tmp_path / "whole", chunk_size=10_000)
    for name in ("data", "indices", "indptr"):
        assert np.array_equal(small.bm25.scores[name], whole.bm25.scores[name])
    assert small.bm25.vocab_dict == whole.bm25.vocab_dict


def test_loaded_index_is_memory_mapped_and_answers_as_when_loaded_into_memory(corpus, tmp_path):
    mapped = build(corpus, tmp_path / "index")
    in_memory = load_retriever("bm25", {"index": str(tmp_path / "index"), "mmap": False}, registry=REGISTRY)
    assert isinstance(mapped.bm25.scores["data"], np.memmap)
    assert not isinstance(in_memory.bm25.scores["data"], np.memmap)
    assert mapped.search(QUERIES, 5) == in_memory.search(QUERIES, 5)


def test_k_larger_than_the_corpus_returns_every_passage_that_matches(tmp_path):
    corpus = write_dpr_tsv(tmp_path / "c.tsv", passages(12))
    hits = build(corpus, tmp_path / "index").search(["title"], 50)  # every title has it; passage 5 has none
    assert sorted(int(hit.id) for hit in hits[0]) == [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12]


SEARCH_WORDS = ["king", "queen", "castle", "river", "zzz", "the", "song", "moses"]  # "the": a stopword


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(SEARCH_WORDS), max_size=6), min_size=1, max_size=12),
    st.lists(st.sampled_from(SEARCH_WORDS), max_size=4),
    st.integers(1, 15),
    st.sampled_from(METHODS),
)
@example([["king"], ["king"]], ["king"], 2, "atire")  # idf log(2/2): both at score 0, both hold "king"
@example([["king"], ["queen"]], ["king"], 2, "bm25l")  # "queen" at king's non-occurrence score, above 0
@example([[]], ["king"], 1, "lucene")  # no passage holds a word: bm25s's vocabulary is empty
def test_a_search_returns_only_passages_that_hold_a_word_of_the_query_in_bm25s_order(
    tmp_path_factory, texts, query, k, method
):
    """The hits are bm25s's whole ranking (score, then passage number) less the passages that hold no word of the
    query: its zero-score padding (bm25l and bm25+ give those their non-occurrence score), cut at k. A passage that
    holds one is kept at any score: atire's idf of a word in every passage is 0, robertson's of one in half or more."""
    import bm25s
    import Stemmer

    tmp = tmp_path_factory.mktemp("match")
    docs = [Document(id=str(i), title="", text=" ".join(words) or "the") for i, words in enumerate(texts, 1)]
    retriever = build(write_dpr_tsv(tmp / "c.tsv", docs), tmp / "index", method=method)
    hits = retriever.search([" ".join(query)], k)[0]
    words = set(query) - {"the"}
    [tokens] = bm25s.tokenize(
        [" ".join(query)], stopwords="en", stemmer=Stemmer.Stemmer("porter"), return_ids=False, show_progress=False
    )
    ids = retriever.bm25.get_tokens_ids(tokens)  # bm25s's scores, padding and all (none for an empty vocabulary)
    every = retriever.bm25.get_scores_from_ids(ids) if ids else np.zeros(len(docs), dtype=np.float32)
    ranking = sorted(range(len(docs)), key=lambda i: (-every[i], i))
    expected = [i for i in ranking if words & set(docs[i].text.split())][:k]
    assert [hit.id for hit in hits] == [docs[i].id for i in expected]
    assert [hit.score for hit in hits] == [float(every[i]) for i in expected]


def test_manifest_records_kind_options_corpus_and_bad_records(tmp_path):
    corpus = write_dpr_tsv(tmp_path / "c.tsv", passages(20))
    with open(corpus, "a", encoding="utf-8") as handle:
        handle.write("21\tmissing title column\n")
    retriever = build(corpus, tmp_path / "index")
    manifest = json.loads((tmp_path / "index" / "manifest.json").read_text())
    assert manifest["retriever"] == "bm25" and manifest["doc_count"] == 20
    assert manifest["options"]["k1"] == 0.9 and manifest["options"]["stemmer"] == "porter"
    assert manifest["corpus"]["format"] == "dpr_tsv" and len(manifest["corpus"]["sha256"]) == 64
    assert manifest["bad_records"] == 1 and "c.tsv:22" in manifest["errors"][0]
    assert retriever.metadata()["doc_count"] == 20


def test_index_folder_errors_say_what_and_how_to_fix(tmp_path):
    with pytest.raises(
        ConfigError,
        match=r"retriever bm25 needs --retriever-arg index=DIR; build it with "
        r"`ragbench index build",
    ):
        load_retriever("bm25", {}, registry=installed_registry())
    with pytest.raises(ConfigError, match=r"index folder .*missing does not exist; build it with"):
        load_retriever("bm25", {"index": str(tmp_path / "missing")}, registry=installed_registry())
    (tmp_path / "half").mkdir()
    with pytest.raises(ConfigError, match=r"is not a ragbench index \(no manifest.json; an unfinished build"):
        load_retriever("bm25", {"index": str(tmp_path / "half")}, registry=installed_registry())
    corpus = write_dpr_tsv(tmp_path / "c.tsv", passages(12))
    build(corpus, tmp_path / "index")
    with pytest.raises(ConfigError, match=r"holds a bm25 index, not dense; use --retriever bm25"):
        load_retriever("dense", {"index": str(tmp_path / "index")}, registry=installed_registry())


def test_build_option_errors_are_config_errors(tmp_path):
    corpus = write_dpr_tsv(tmp_path / "c.tsv", passages(12))
    with pytest.raises(ConfigError, match="bm25 method 'okapi' is unknown"):
        build(corpus, tmp_path / "a", method="okapi")
    assert not (tmp_path / "a").exists() and not (tmp_path / "a.partial").exists()
    with pytest.raises(ConfigError, match="bm25 stemmer 'klingon' is unknown"):
        build(corpus, tmp_path / "b", stemmer="klingon")
    with pytest.raises(
        ConfigError,
        match=r"--build-arg model=x: index build --retriever bm25 has no option 'model' \(accepted: k1=<float",
    ):
        build(corpus, tmp_path / "c", model="x")
    with pytest.raises(ConfigError, match="retriever provided has no index to build"):
        build_index(corpus, tmp_path / "d", "provided", progress=False, registry=installed_registry())
    build(corpus, tmp_path / "e")
    with pytest.raises(ConfigError, match="exists and is not empty; pass --overwrite"):
        build(corpus, tmp_path / "e")
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"id": "1"}\n')
    with pytest.raises(ConfigError, match=r"has no readable passages \(1 bad records\)"):
        build(empty, tmp_path / "f")
    assert not (tmp_path / "f").exists() and not (tmp_path / "f.partial").exists()


@pytest.mark.parametrize("query", ["", "   ", "the of and", "a b c", "zzz unknownword"])
def test_a_query_with_no_word_any_passage_holds_returns_nothing(corpus, tmp_path, query):
    """Not the corpus's first passages at score 0 (what an IRCoT loop's empty queries were shown, and a reader
    took for found), as pyserini: one that analyses to nothing (empty, stopwords alone, one-letter words) or whose
    words are in no passage."""
    retriever = build(corpus, tmp_path / "index")
    assert retriever.search([query, "king queen castle"], 5)[0] == []
    assert len(retriever.search([query, "king queen castle"], 5)[1]) == 5

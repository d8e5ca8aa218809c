"""`--retriever flashrag_bm25`: the BM25 index folder FlashRAG built (bm25s backend) searched as FlashRAG searches it.

tests/data/flashrag_bm25 holds what tests/data/flashrag_bm25/record.py recorded with FlashRAG's own code, unchanged
(commit 1ee5249, bm25s 0.2.1 as its requirements pin, numba 0.68.1): corpus.jsonl, bm25/ (the folder FlashRAG's
`Index_Builder` wrote from it) and expected.json (what FlashRAG's `BM25Retriever` answered, and bm25s's numba
top k on arrays full of ties).
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA, needs, write_jsonl
from ragbench._retrieval.bm25 import numba_top_k as selection
from ragbench._retrieval.bm25.flashrag import FlashRagBM25Retriever, query_words
from ragbench.api import ConfigError
from ragbench.api.retrieval import RetrievalError
from ragbench.testing import build_index, installed_registry
from support.helpers import run, samples

pytestmark = needs("bm25s")  # not imported while the tests are collected


FILES = TEST_DATA / "flashrag_bm25"
CORPUS = FILES / "corpus.jsonl"
EXPECTED = json.loads((FILES / "expected.json").read_text(encoding="utf-8"))
ANSWERED = sorted(key for key, case in EXPECTED["search"].items() if "error" not in case)
NO_WORDS = sorted(
    {
        key.split("\t", 1)[1]
        for key, case in EXPECTED["search"].items()
        if case.get("error", "").startswith("ValueError")
    }
)


@pytest.fixture(scope="module")
def flashrag_index() -> FlashRagBM25Retriever:
    return FlashRagBM25Retriever(index=str(FILES / "bm25"), corpus=str(CORPUS))


def found(rows: list) -> tuple[list, list]:
    return [[doc.id for doc in row] for row in rows], [[doc.score for doc in row] for row in rows]


@pytest.mark.parametrize("key", ANSWERED)
def test_ids_scores_and_order_of_ties_equal_flashrags_search_on_its_own_index(flashrag_index, key):
    k, query = key.split("\t", 1)
    ids, scores = found(flashrag_index.search([query], int(k)))
    assert ids[0] == EXPECTED["search"][key]["ids"]
    assert scores[0] == EXPECTED["search"][key]["scores"]  # bit for bit: float32 sums in FlashRAG's order


def test_a_batch_answers_as_flashrags_batch_search(flashrag_index):
    batch = EXPECTED["batch_search"]
    assert found(flashrag_index.search(batch["queries"], EXPECTED["topk"])) == (batch["ids"], batch["scores"])


def test_query_words_are_not_stemmed_as_in_flashrag(flashrag_index):
    """The index holds "castl" and "templ"; FlashRAG's query tokenisation keeps "castle" and "temple", which miss."""
    assert {"castl", "templ", "run"} <= set(flashrag_index.vocab)
    assert query_words("The Castle's temple", flashrag_index.stopwords) == ["castle", "temple"]
    assert {doc.score for doc in flashrag_index.search(["castle temple"], 5)[0]} == {0.0}
    assert flashrag_index.search(["run"], 5)[0][0].score > 0


@pytest.mark.parametrize("query", NO_WORDS)
def test_a_query_left_without_words_fails_alone_naming_the_query(flashrag_index, query):
    """FlashRAG raises ValueError for these (recorded); here that query's search fails, the batch's others do not."""
    rows = flashrag_index.search(["glacier and volcano", query, "zebra"], EXPECTED["topk"])
    assert isinstance(rows[1], RetrievalError) and json.dumps(query) in str(rows[1])
    assert [doc.id for doc in rows[0]] == EXPECTED["search"]["10\tglacier and volcano"]["ids"]
    assert [doc.id for doc in rows[2]] == EXPECTED["search"]["10\tzebra"]["ids"]


def test_k_above_the_corpus_size_gives_every_passage_in_flashrags_order(flashrag_index):
    """FlashRAG's numba search raises SystemError for k > passages (recorded); here: all of them, in the order
    FlashRAG gives for k = the corpus size."""
    query = "zebra quartz"
    assert EXPECTED["search"][f"{EXPECTED['large_k']}\t{query}"]["error"].startswith("SystemError")
    ids, _ = found(flashrag_index.search([query], EXPECTED["large_k"]))
    assert ids[0] == EXPECTED["search"][f"{EXPECTED['all_k']}\t{query}"]["ids"]


@pytest.mark.parametrize("case", EXPECTED["selection"], ids=lambda case: f"n{len(case['scores'])}-k{case['k']}")
def test_the_top_k_order_is_bm25s_numba_selections(case):
    values, positions = selection.numba_top_k(np.array(case["scores"], dtype=np.float32), case["k"])
    assert positions.tolist() == case["positions"] and values.tolist() == case["values"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.5, 1.25, 2.0, 3.5]), min_size=0, max_size=90),
    st.integers(0, 100),
    st.integers(1, 9),
)
def test_the_top_k_holds_the_best_scores_each_passage_once_whatever_the_block(scores, k, block):
    array = np.array(scores, dtype=np.float32)
    values, positions = selection.numba_top_k(array, k)
    assert len(positions) == min(k, len(array)) == len(set(positions.tolist()))
    assert values.tolist() == sorted(array.tolist(), reverse=True)[:k] == array[positions].tolist()
    whole = selection.BLOCK
    try:  # the heap replay skips what cannot enter the heap block by block: the block size changes nothing
        selection.BLOCK = block
        assert [v.tolist() for v in selection.numba_top_k(array, k)] == [values.tolist(), positions.tolist()]
    finally:
        selection.BLOCK = whole


def test_index_build_writes_the_files_flashrags_index_builder_writes(tmp_path):
    built = tmp_path / "bm25"
    build_index(
        CORPUS, built, "flashrag_bm25", {"language": "en"}, chunk_size=64, progress=False, registry=installed_registry()
    )
    for name in ("data", "indices", "indptr"):
        ours, theirs = np.load(built / f"{name}.csc.index.npy"), np.load(FILES / "bm25" / f"{name}.csc.index.npy")
        assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
    for name in ("vocab.index.json", "vocab.tokenizer.json", "stopwords.tokenizer.json", "params.index.json"):
        ours, theirs = (json.loads((folder / name).read_text(encoding="utf-8")) for folder in (built, FILES / "bm25"))
        if name == "params.index.json":  # the bm25s that wrote it
            assert ours.pop("version") != theirs.pop("version") == "0.2.1"
        assert ours == theirs
    rebuilt = FlashRagBM25Retriever(index=str(built), corpus=str(CORPUS))
    batch = EXPECTED["batch_search"]
    assert found(rebuilt.search(batch["queries"], EXPECTED["topk"])) == (batch["ids"], batch["scores"])


def test_the_language_is_judged_on_the_first_passage_as_flashrag_does(tmp_path, monkeypatch):
    from ragbench._retrieval.bm25 import flashrag as flashrag_bm25

    judged: list[str] = []
    monkeypatch.setattr(flashrag_bm25, "is_chinese", lambda text: judged.append(text) or True)
    corpus = write_jsonl(
        tmp_path / "zh.jsonl",
        [{"id": "a", "contents": '"标题"\n北京 的 天气'}, {"id": "b", "contents": '"Title"\nthe running river'}],
    )
    manifest = build_index(corpus, tmp_path / "zh", "flashrag_bm25", progress=False, registry=installed_registry())
    assert judged == ['"标题"\n北京 的 天气']
    assert manifest.options["language"] == "zh" and manifest.options["stemmer"] == "none"
    assert "running" in json.loads((tmp_path / "zh" / "vocab.index.json").read_text(encoding="utf-8"))  # not stemmed


def test_a_run_counts_the_query_left_without_words_as_its_examples_failure(tmp_path):
    data = write_jsonl(
        tmp_path / "nq.jsonl",
        [
            {"id": "q1", "question": "zebra quartz", "golden_answers": ["zebra"]},
            {"id": "q2", "question": "the", "golden_answers": ["x"]},
        ],
    )
    results = run(
        tmp_path,
        tasks=["nq_open_flashrag"],
        system="vanilla",
        model="scripted:echo",
        data={"nq_open_flashrag": str(data)},
        retriever="flashrag_bm25",
        retriever_args={"index": str(FILES / "bm25"), "corpus": str(CORPUS)},
        bootstrap_iters=10,
    )
    assert results["counts"]["nq_open_flashrag"]["failed"] == 1
    records = {record["id"]: record for record in samples(tmp_path / "run", "nq_open_flashrag")}
    shown = [doc["id"] for doc in records["q1"]["prediction"]["docs"]]  # top 5: ties ordered as FlashRAG's k=5 does
    assert shown[:2] == ["rare1", "rare0"] and len(shown) == 5
    assert 'query "the" has no word' in records["q2"]["error"]


@pytest.mark.parametrize("missing", ["params.index.json", "indptr.csc.index.npy"])
def test_a_folder_without_bm25s_files_is_refused_naming_them(tmp_path, missing):
    folder = shutil.copytree(FILES / "bm25", tmp_path / "bm25")
    (folder / missing).unlink()
    with pytest.raises(ConfigError, match=f"has no {missing}: not a bm25s index"):
        FlashRagBM25Retriever(index=str(folder), corpus=str(CORPUS))


def test_a_corpus_of_another_size_than_the_index_is_refused(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    with pytest.raises(ConfigError, match="holds 299 passages, index .* was built over 300"):
        FlashRagBM25Retriever(index=str(FILES / "bm25"), corpus=str(corpus))


def test_index_files_of_two_builds_are_refused(tmp_path):
    folder = shutil.copytree(FILES / "bm25", tmp_path / "bm25")
    np.save(folder / "data.csc.index.npy", np.load(folder / "data.csc.index.npy")[:-1])
    with pytest.raises(
        ConfigError,
        match=r"index .*: data.csc.index.npy: holds 1268 postings where indptr.csc.index.npy ends at 1269 \(damaged",
    ):
        FlashRagBM25Retriever(index=str(folder), corpus=str(CORPUS))


def test_a_lucene_index_of_flashrags_pyserini_backend_is_named_and_refused(tmp_path):
    folder = tmp_path / "bm25"
    folder.mkdir()
    (folder / "segments_1").write_bytes(b"")
    with pytest.raises(ConfigError, match="is a Lucene index .*pyserini backend.* --retriever flashrag_bm25"):
        FlashRagBM25Retriever(index=str(folder), corpus=str(CORPUS))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"corpus": str(CORPUS)}, "retriever flashrag_bm25 needs --retriever-arg index=DIR (the folder FlashRAG's"),
        ({"index": "nowhere", "corpus": str(CORPUS)}, "retriever flashrag_bm25: index nowhere: no such folder; pass"),
        ({"index": str(CORPUS), "corpus": str(CORPUS)}, f"index {CORPUS}: no such folder; pass index= the folder"),
        ({"index": str(FILES / "bm25")}, "needs --retriever-arg corpus=PATH (the JSONL corpus the index was built"),
        ({"index": str(FILES / "bm25"), "corpus": "nowhere.jsonl"}, "corpus nowhere.jsonl: no such file; pass corpus="),
        ({"index": str(FILES / "bm25"), "corpus": str(FILES / "bm25")}, "no such file; pass corpus= the JSONL corpus"),
    ],
)
def test_a_missing_index_folder_or_corpus_file_is_named_in_one_line(options, message):
    with pytest.raises(ConfigError) as refused:
        FlashRagBM25Retriever(**options)
    assert message in str(refused.value) and "\n" not in str(refused.value)

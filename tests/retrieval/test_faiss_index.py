"""`--retriever faiss_index`: a faiss index FlashRAG built, its JSONL corpus and its encoder, searched as they are.

The index files in tests/data/flashrag_faiss were built by FlashRAG's own `Index_Builder` and expected.json holds
what FlashRAG's `DenseRetriever.batch_search` returned for them (record.py there, run in a venv with FlashRAG),
with the tiny encoder that tests/support/flashrag_faiss_fixtures.py makes again here, weight for weight.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import TEST_DATA, needs
from ragbench.api import ConfigError
from ragbench.api.retrieval import RetrievalError
from ragbench.testing import installed_registry, load_retriever, run_eval
from support.flashrag_faiss_fixtures import QUERIES, corpus_rows, write_tiny_bert
from support.helpers import cli_here, samples

pytestmark = needs("faiss", "transformers")  # imported by the tests that use them, not while collecting

FILES = TEST_DATA / "flashrag_faiss"
EXPECTED = json.loads((FILES / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    return write_tiny_bert(tmp_path_factory.mktemp("encoder") / "tiny-bert")


def retriever(
    model: Path, index: Path | str = FILES / "e5_Flat.index", corpus: Path | str = FILES / "corpus.jsonl", **options
):
    options = {"index": str(index), "corpus": str(corpus), "model": str(model), **options}
    return load_retriever("faiss_index", options, registry=installed_registry())


@pytest.mark.parametrize("index", sorted(EXPECTED["cases"]))
def test_ids_and_scores_equal_flashrags_dense_retriever_on_its_own_index(tiny_bert, index):
    case = EXPECTED["cases"][index]
    found = retriever(tiny_bert, FILES / index, instruction=case["instruction"])
    hits = found.search(EXPECTED["queries"], EXPECTED["topk"])
    assert [[doc.id for doc in row] for row in hits] == case["ids"]
    # float32 inner products: faiss versions sum an IVF list's residuals in another order (a few ulps, ~1e-6 relative)
    np.testing.assert_allclose([[doc.score for doc in row] for row in hits], case["scores"], rtol=2e-6, atol=1e-5)
    assert found.metadata()["pooling"] == case["pooling"]  # FlashRAG's model2pooling for the method's name
    found.close()


def test_a_flat_index_left_on_disk_answers_the_same(tiny_bert):
    in_memory = retriever(tiny_bert).search(QUERIES, 5)
    mapped = retriever(tiny_bert, mmap=True)
    assert mapped.metadata()["index_type"] == "IndexFlatIP"
    assert [[(doc.id, doc.score) for doc in row] for row in mapped.search(QUERIES, 5)] == [
        [(doc.id, doc.score) for doc in row] for row in in_memory
    ]


def test_the_method_sets_prefix_pooling_and_normalisation_as_flashrag_does(tiny_bert):
    e5 = retriever(tiny_bert)
    assert {
        "method": "e5",
        "query_prefix": "query: ",
        "pooling": "mean",
        "normalize": True,
    }.items() <= e5.metadata().items()
    assert e5.encoder.texts(["a passage"], is_query=False) == ["passage: a passage"]
    dpr = retriever(tiny_bert, FILES / "dpr_IVF2,Flat.index")
    assert {
        "method": "dpr",
        "query_prefix": "",
        "pooling": "pooler",
        "normalize": False,
    }.items() <= dpr.metadata().items()
    given = retriever(tiny_bert, instruction="  Find:  ", pooling="cls", check_encoder=False)  # strip() + " "
    assert given.encoder.texts(["q"], is_query=True) == ["Find: q"] and given.metadata()["pooling"] == "cls"


def test_an_encoder_that_does_not_give_the_indexs_vectors_is_refused(tmp_path, tiny_bert):
    assert retriever(tiny_bert).metadata()["encoder_check"] == "row 0 at cosine 1.0000"
    other = write_tiny_bert(tmp_path / "other-bert", seed=1)  # same dimension, other weights
    with pytest.raises(
        ConfigError,
        match=r"does not give the vectors of index .*e5_Flat.index \(its row 0 encodes at "
        r"cosine -?0\.\d+ to the stored one\)",
    ):
        retriever(other)
    with pytest.raises(ConfigError, match=r"pooling cls, passage prefix 'passage: '"):  # the index's, pooled otherwise
        retriever(tiny_bert, pooling="cls")
    assert retriever(other, check_encoder=False).encoder_check == "off"
    ivf = retriever(tiny_bert, FILES / "dpr_IVF2,Flat.index").metadata()["encoder_check"]
    assert ivf.startswith("skipped (IndexIVFFlat gives back no stored vector")


def test_passages_come_from_the_rows_flashrag_numbers_blank_lines_left_out(tiny_bert):
    hits = retriever(tiny_bert).search([QUERIES[0]], 40)[0]
    by_id = {row["id"]: row for row in corpus_rows()}
    assert len(hits) == 40 and {doc.id for doc in hits} == set(by_id)
    for doc in hits:  # the title is the contents' first line, unquoted (ragbench's FlashRAG passages)
        title, text = by_id[doc.id]["contents"].split("\n", 1)
        assert (doc.title, doc.text) == (title.strip('"'), text)


def test_labels_faiss_did_not_fill_are_left_out_not_shown_as_the_last_passage(tiny_bert):
    # IVF2 probes one of its two lists: fewer than 40 vectors are found, the rest come back as -1 (FlashRAG's
    # corpus[-1] shows the last passage for each); nprobe=2 probes both
    one_list = retriever(tiny_bert, FILES / "dpr_IVF2,Flat.index").search([QUERIES[0]], 40)[0]
    assert 0 < len(one_list) < 40 and len({doc.id for doc in one_list}) == len(one_list)
    both = retriever(tiny_bert, FILES / "dpr_IVF2,Flat.index", nprobe=2).search([QUERIES[0]], 40)[0]
    assert len(both) == 40


def test_ef_search_is_set_on_an_hnsw_index_and_refused_on_a_flat_one(tiny_bert):
    import faiss

    hnsw = retriever(tiny_bert, FILES / "bge_HNSW8.index", instruction="Represent:", ef_search=64)
    assert faiss.downcast_index(hnsw.index).hnsw.efSearch == 64 and hnsw.metadata()["ef_search"] == 64
    with pytest.raises(ConfigError, match=r"nprobe= does not apply to index .*e5_Flat.index \(IndexFlat"):
        retriever(tiny_bert, nprobe=4)


def test_a_run_searches_the_index_and_records_what_it_searched(tmp_path, tiny_bert):
    results = run_eval(
        "demo",
        "vanilla",
        "scripted:echo",
        retriever="faiss_index",
        retriever_args={
            "index": str(FILES / "e5_Flat.index"),
            "corpus": str(FILES / "corpus.jsonl"),
            "model": str(tiny_bert),
        },
        output=tmp_path / "run",
        bootstrap_iters=10,
        limit=2,
    ).results
    assert results["counts"]["demo"]["failed"] == 0
    meta = results["config"]["retriever_metadata"]
    assert meta["retriever"] == "faiss_index" and meta["vectors"] == 40 and meta["index_type"] == "IndexFlatIP"
    docs = samples(tmp_path / "run", "demo")[0]["prediction"]["docs"]
    assert docs and all(doc["id"] in {row["id"] for row in corpus_rows()} for doc in docs)


# -- pre-flight: one line each, before the encoder loads ---------------------------------------------------------


@pytest.fixture
def config_only_model(tmp_path, tiny_bert) -> Path:
    """The encoder's config.json without its weights: a check that passes here ran before any model loaded."""
    folder = tmp_path / "config-only"
    folder.mkdir()
    shutil.copy(tiny_bert / "config.json", folder / "config.json")
    return folder


def flat_index(path: Path, vectors: int, dim: int) -> Path:
    import faiss

    index = faiss.IndexFlatIP(dim)
    index.add(np.random.RandomState(0).standard_normal((vectors, dim)).astype(np.float32))
    faiss.write_index(index, str(path))
    return path


@pytest.mark.parametrize("missing", ["index", "corpus", "model"])
def test_a_missing_file_is_named_in_one_line(tmp_path, config_only_model, missing):
    paths = {"index": FILES / "e5_Flat.index", "corpus": FILES / "corpus.jsonl", "model": config_only_model}
    paths[missing] = tmp_path / "nowhere"
    with pytest.raises(ConfigError, match=rf"{missing} .*nowhere: no such (file|folder)"):
        retriever(paths["model"], paths["index"], paths["corpus"])


def test_a_models_config_json_cut_short_is_named_in_one_line(config_only_model):
    config = config_only_model / "config.json"
    config.write_bytes(config.read_bytes()[:30])
    with pytest.raises(ConfigError, match=r": model .*: config.json unreadable \(.*\); download the model again$"):
        retriever(config_only_model, FILES / "e5_Flat.index")


def test_an_index_of_another_size_than_the_corpus_is_refused(tmp_path, config_only_model):
    index = flat_index(tmp_path / "e5_Flat.index", 41, 32)
    with pytest.raises(ConfigError, match=r"holds 41 vectors, corpus .* 40 rows"):
        retriever(config_only_model, index)


def test_an_index_of_another_dimension_than_the_encoder_is_refused(tmp_path, config_only_model):
    index = flat_index(tmp_path / "e5_Flat.index", 40, 16)
    with pytest.raises(ConfigError, match=r"gives 32-dimensional vectors, index .* holds 16-dimensional"):
        retriever(config_only_model, index)


def test_a_file_that_is_not_a_faiss_index_or_is_cut_short_is_refused(tmp_path, tiny_bert):
    text = tmp_path / "e5_Flat.index"
    text.write_text("not an index at all\n")
    with pytest.raises(ConfigError, match=r"is not a faiss index"):
        retriever(tiny_bert, text)
    cut = tmp_path / "cut" / "e5_Flat.index"
    cut.parent.mkdir()
    cut.write_bytes((FILES / "e5_Flat.index").read_bytes()[:2000])  # a copy that stopped
    with pytest.raises(ConfigError, match=r"could not be read .*copy or build it again") as caught:
        retriever(tiny_bert, cut)
    assert "\n" not in str(caught.value)


def test_a_bge_index_without_langid_or_an_instruction_is_refused(tiny_bert, monkeypatch):
    monkeypatch.setitem(sys.modules, "langid", None)  # FlashRAG judges a bge query's language with it
    with pytest.raises(ConfigError, match=r"pip install langid, or pass instruction="):
        retriever(tiny_bert, FILES / "bge_HNSW8.index")


def test_the_cli_names_a_missing_index_in_one_line(tmp_path):
    done = cli_here(
        "--tasks",
        "demo",
        "--model",
        "scripted:echo",
        "--retriever",
        "faiss_index",
        "--retriever-arg",
        f"index={tmp_path / 'e5_Flat.index'}",
        "--output",
        str(tmp_path / "run"),
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "e5_Flat.index: no such file" in done.stderr


# -- a damaged corpus row ----------------------------------------------------------------------------------------


def test_a_damaged_first_row_is_refused_and_a_damaged_hit_fails_its_search(tmp_path, tiny_bert):
    lines = (FILES / "corpus.jsonl").read_text().splitlines()
    first = tmp_path / "first.jsonl"
    first.write_text("\n".join(['{"id": "1000", "contents": '] + lines[1:]) + "\n")
    with pytest.raises(ConfigError, match=r"first.jsonl row 0: not a JSON passage"):
        retriever(tiny_bert, corpus=first)
    hit = retriever(tiny_bert).search([QUERIES[0]], 1)[0][0]
    row = next(
        number for number, line in enumerate(line for line in lines if line.strip()) if json.loads(line)["id"] == hit.id
    )
    later = tmp_path / "later.jsonl"
    rows = [line for line in lines if line.strip()]
    rows[row] = '{"contents": "no id"}'
    later.write_text("\n".join(rows) + "\n")
    with pytest.raises(RetrievalError, match=rf"later.jsonl row {row} field 'id': missing passage id"):
        retriever(tiny_bert, corpus=later).search([QUERIES[0]], 1)


def test_an_index_mapping_its_vectors_to_ids_past_the_corpus_is_refused_before_the_encoder_loads(
    tmp_path, config_only_model
):
    """Ids of an `IndexIDMap` are the rows a search shows: one past the corpus (or below 0) would fail, or show
    another row, in the middle of a run."""
    import faiss

    index = faiss.IndexIDMap(faiss.IndexFlatIP(32))
    vectors = np.random.RandomState(0).standard_normal((40, 32)).astype(np.float32)
    index.add_with_ids(vectors, np.arange(40, dtype=np.int64) + 5)
    path = tmp_path / "e5_Flat.index"
    faiss.write_index(index, str(path))
    with pytest.raises(ConfigError, match=r"maps vector 35 to id 40, not a row of corpus .* \(0\.\.39\)"):
        retriever(config_only_model, path)


def test_an_encoder_whose_config_names_no_width_is_measured_against_the_index(tmp_path, tiny_bert):
    """DistilBERT's config.json says `dim`, not `hidden_size`: the width of a vector it gives is compared instead."""
    from transformers import DistilBertConfig, DistilBertModel

    from support.flashrag_faiss_fixtures import vocabulary

    folder = tmp_path / "tiny-distilbert"
    config = DistilBertConfig(
        vocab_size=len(vocabulary()), dim=16, n_layers=1, n_heads=2, hidden_dim=32, max_position_embeddings=64
    )
    DistilBertModel(config).save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if (tiny_bert / name).exists():
            shutil.copy(tiny_bert / name, folder / name)
    with pytest.raises(ConfigError, match=r"gives 16-dimensional vectors, index .* holds 32-dimensional"):
        retriever(folder, check_encoder=False)

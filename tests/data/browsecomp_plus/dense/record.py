"""Records what BrowseComp-Plus's dense searcher does with the tiny encoder and corpus of
tests/support/qwen3_embedding_fixtures.py.

Run with a Python that has Tevatron installed (texttron/tevatron, its code unchanged) and a checkout of
texttron/BrowseComp-Plus (searcher/searchers/faiss_searcher.py, unchanged):

    python tests/data/browsecomp_plus/dense/record.py PATH/TO/BrowseComp-Plus

Writes here: corpus.jsonl, the index shards corpus.shard0.pkl and corpus.shard1.pkl as Tevatron's encode driver
writes them (scripts_build_index/qwen3-embed.md's corpus command, sharded), and expected.json, the docids and scores
faiss_searcher.py's `FaissSearcher.search` returns for the fixture's queries in each case.

What differs from the leaderboard's setting, as a CPU requires: attention is sdpa (Tevatron's default,
flash_attention_2, needs flash-attn and a GPU), the corpus is encoded in float32 (`--fp16` autocasts on CUDA).
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import tempfile
import types
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent.parent))

from support.qwen3_embedding_fixtures import QUERIES, write_corpus, write_tiny_qwen3  # noqa: E402

SHARDS = 2
TOPK = 5
# (name, --torch-dtype, --max-length, --normalize)
CASES = [
    ("float32", "float32", 8192, True),
    ("float16", "float16", 8192, True),
    ("float32_max_length_36", "float32", 36, True),
]
ATTENTION = "sdpa"


def faiss_searcher_class(checkout: Path):
    """faiss_searcher.py imported as it is, without searcher/searchers/__init__.py (which imports pyserini)."""
    for name, folder in (("searcher", checkout / "searcher"), ("searcher.searchers", checkout / "searcher/searchers")):
        package = types.ModuleType(name)
        package.__path__ = [str(folder)]
        sys.modules[name] = package
    module = importlib.import_module("searcher.searchers.faiss_searcher")
    # Tevatron's ModelArguments default attention is flash_attention_2: sdpa on a CPU
    fields = module.ModelArguments.__dataclass_fields__
    fields["attn_implementation"].default = ATTENTION
    module.ModelArguments.__init__.__defaults__ = tuple(
        ATTENTION if default == "flash_attention_2" else default
        for default in module.ModelArguments.__init__.__defaults__
    )
    return module.FaissSearcher


def encode_corpus(model: Path, corpus: Path, scratch: Path) -> None:
    for shard in range(SHARDS):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "tevatron.retriever.driver.encode",
                "--output_dir", str(scratch / "out"),
                "--model_name_or_path", str(model),
                "--dataset_path", str(corpus),
                "--encode_output_path", str(HERE / f"corpus.shard{shard}.pkl"),
                "--passage_max_len", "4096",
                "--normalize",
                "--pooling", "eos",
                "--passage_prefix", "",
                "--per_device_eval_batch_size", "8",
                "--dataset_number_of_shards", str(SHARDS),
                "--dataset_shard_index", str(shard),
                "--attn_implementation", ATTENTION,
                "--report_to", "none",
            ],
            check=True,
        )  # fmt: skip


def main() -> None:
    checkout = Path(sys.argv[1]).resolve()
    searcher_class = faiss_searcher_class(checkout)
    corpus = write_corpus(HERE / "corpus.jsonl")
    expected: dict = {
        "queries": QUERIES,
        "topk": TOPK,
        "attn_implementation": ATTENTION,
        "versions": {name: version(name) for name in ("torch", "transformers", "faiss-cpu", "numpy", "tevatron")},
        "cases": {},
    }
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        model = write_tiny_qwen3(scratch / "tiny-qwen3")
        encode_corpus(model, corpus, scratch)
        dataset = scratch / "dataset"
        dataset.mkdir()
        write_corpus(dataset / "corpus.jsonl")
        for name, dtype, max_length, normalize in CASES:
            parser = argparse.ArgumentParser()
            searcher_class.parse_args(parser)
            arguments = [
                "--index-path", str(HERE / "corpus.shard*.pkl"),
                "--model-name", str(model),
                "--torch-dtype", dtype,
                "--max-length", str(max_length),
                "--dataset-name", str(dataset),
            ] + (["--normalize"] if normalize else [])  # fmt: skip
            searcher = searcher_class(parser.parse_args(arguments))
            expected["cases"][name] = {
                "torch_dtype": dtype,
                "max_length": max_length,
                "normalize": normalize,
                "results": [
                    [[hit["docid"], hit["score"]] for hit in searcher.search(query, TOPK)] for query in QUERIES
                ],
            }
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

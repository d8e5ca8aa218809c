"""FlashRAG's pipelines and ragbench's systems with the same real model and the same BM25 give the same prompts,
searches and predictions.

tests/data/flashrag_real_model/expected.json is what record.py there recorded from FlashRAG's own zero-shot, naive
and Iter-RetGen pipelines (commit 1ee5249, unchanged) with SmolLM2-135M-Instruct (the embedded model's weights
de-quantized to safetensors) through FlashRAG's HFCausalLMGenerator, greedy on CPU, and FlashRAG's BM25 (bm25s
0.2.1) over tests/data/flashrag_parity/corpus.jsonl; the library versions are in the file (transformers 5.24.0,
torch 2.13.0+cpu). Here the matching systems run on `hf:embedded` with `--retriever flashrag_bm25` over an index
`ragbench index build` makes from the same corpus. The order of calls across examples is the scheduler's, so
prompts and searches are compared as multisets, predictions per example.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from conftest import TEST_DATA
from flashrag_parity import CORPUS, QUESTIONS, chatml
from helpers import run, samples
from ragbench._registry import installed_registry
from ragbench._retrieval.index import build_index

pytestmark = pytest.mark.model
pytest.importorskip("transformers")

RECORDED = json.loads((TEST_DATA / "flashrag_real_model" / "expected.json").read_text(encoding="utf-8"))
SYSTEMS = {"zero_shot": "closed_book", "naive": "vanilla", "iter_retgen": "iter_retgen"}
TASK = "nq_open_flashrag"


@pytest.fixture(scope="module")
def flashrag_bm25_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("index") / "bm25"
    build_index(CORPUS, folder, "flashrag_bm25", {"language": "en"}, progress=False, registry=installed_registry())
    return folder


@pytest.mark.parametrize("method", sorted(SYSTEMS))
def test_the_system_on_the_embedded_model_prompts_searches_and_answers_as_flashrags_pipeline(
    tmp_path, flashrag_bm25_index, method
):
    recorded = RECORDED["methods"][method]
    run(
        tmp_path,
        name=method,
        tasks=[TASK],
        system=SYSTEMS[method],
        data={TASK: str(QUESTIONS)},
        model="hf:embedded",
        model_args={"chat": True},
        retriever="flashrag_bm25",
        metrics=[],
        bootstrap_iters=10,
        retriever_args={"index": str(flashrag_bm25_index), "corpus": str(CORPUS)},
    )
    records = samples(tmp_path / method, TASK)
    assert {record["id"]: record["prediction"]["answer"] for record in records} == recorded["predictions"]
    steps = [step for record in records for step in record["trace"]]
    prompts = Counter(chatml(step["request"]["messages"]) for step in steps if step["kind"] == "llm")
    assert prompts == Counter(text for call in recorded["calls"] for text in call["inputs"])
    searches = Counter(step["request"]["query"] for step in steps if step["kind"] == "retrieval")
    assert searches == Counter(recorded["searches"])

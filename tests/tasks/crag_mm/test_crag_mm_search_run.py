"""A whole crag_mm_single run with `--retriever cragmm_search`: the model's search-results message is what CRAG-MM's
get_rag_context made for the same image and question over the same indexes and models (recorded from the released
code, tests/data/parity/cragmm_search.json), image block and web block, each example searched by its own image."""

from __future__ import annotations

import json

import pytest

from conftest import TEST_DATA, needs
from ragbench.tasks.crag_mm.records import cached_image_path
from ragbench.tasks.crag_mm.synthetic import write_dataset
from support.crag_mm_helpers import tokenizer_dir

pytestmark = needs("torch", "transformers", "safetensors")

DATA = TEST_DATA / "crag_mm_search"
CONTEXTS = json.loads((TEST_DATA / "parity" / "cragmm_search.json").read_text(encoding="utf-8"))["layouts"]["mixed"][
    "contexts"
]


@pytest.mark.parametrize("system_name", ["vanilla", "crag_mm_rewrite"])
def test_the_models_search_results_are_get_rag_contexts(system_name, tmp_path):
    """`crag_mm_rewrite`'s rewrite (not JSON here) falls back to the question: its one search is vanilla's."""
    from ragbench.testing import ScriptedLLM, run_eval

    cases = [c for c in CONTEXTS if c["image_search"] and c["web_search"]]
    cache, rows = tmp_path / "cache", []
    cache.mkdir()
    for number, case in enumerate(cases):  # web images (read from the download cache as they are, not resized)
        url = f"https://example.org/photo/{number}.png"
        cached_image_path(url, cache).write_bytes((DATA / "images" / case["image"]).read_bytes())
        turn = {
            "interaction_id": f"i{number}",
            "domain": 0,
            "query_category": 0,
            "dynamism": 0,
            "query": case["query"],
            "image_quality": 0,
        }
        answer = {"interaction_id": f"i{number}", "ans_full": "I don't know"}
        rows.append({"session_id": f"s{number}", "image": None, "image_url": url, "turns": [turn], "answers": [answer]})
    path = write_dataset(tmp_path / "data", rows)
    system = ScriptedLLM("I don't know")
    indexes = DATA / "indexes" / "mixed"
    run_eval(
        "crag_mm_single",
        system_name,
        system,
        data=path,
        judges=[ScriptedLLM("")],
        task_args={"tokenizer": tokenizer_dir(), "image_cache": str(cache)},
        system_args={"top_n": 50},  # get_rag_context's 50 web results; its 30 images are image_k's default
        retriever="cragmm_search",
        retriever_args={
            "image_index": str(indexes / "image"),
            "image_model": str(DATA / "models" / "clip"),
            "web_index": str(indexes / "web"),
            "text_model": str(DATA / "models" / "bge"),
        },
    )
    texts = [[m[1] if isinstance(m, tuple) else m.content for m in request.messages] for request in system.requests]
    queries = {case["query"] for case in cases}
    sent = {messages[-1]: messages for messages in texts if messages[-1] in queries}  # the answers', by the question
    assert len(sent) == len(cases)
    for case in cases:
        assert case["context"] in sent[case["query"]], case["query"]
    assert any("Entity 1:" in case["context"] for case in cases)  # an image block among them, attributes shown

"""FlashRAG's pipelines and ragbench's systems with the same real model and the same BM25 give the same prompts,
searches and predictions.

tests/data/flashrag_real_model/expected.json is what record.py there recorded from FlashRAG's own zero-shot, naive,
Iter-RetGen, IRCoT and Self-Ask pipelines (commit 1ee5249, unchanged) with SmolLM2-135M-Instruct (the embedded
model's weights de-quantized to safetensors) through FlashRAG's HFCausalLMGenerator, greedy on CPU, and FlashRAG's
BM25 (bm25s 0.2.1) over tests/data/flashrag_parity/corpus.jsonl; the library versions are in the file (transformers
5.24.0, torch 2.13.0+cpu). Here the matching systems run on `hf:embedded` with `--retriever flashrag_bm25` over an index
`ragbench index build` makes from the same corpus. The order of calls across examples is the scheduler's, so
prompts and searches are compared as multisets, predictions per example.

The multi-step methods were recorded on two of the six questions (`questions` in the recording: a factual one and
a two-hop one), since each of their rounds is a generate call over a prompt of some 1,000-2,000 tokens on CPU.
FlashRAG's IRCoT does not finish with this model: its second thought is empty (the model begins it with a stop
string, "." or a newline), and bm25s raises on the empty query, ending FlashRAG's run; the recording holds the
error and the calls made before it. Its Self-Ask runs its five calls of up to 100 tokens per question (about ten
minutes here on two busy CPU cores, one or two on an idle machine: fewer questions would leave one): the model never
writes a "Follow up: " line nor "So the final answer is: ", so only the question is searched and both predictions
are empty, yet every one of the ten prompts holds all the model's text before it, token for token.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import TEST_DATA
from flashrag_parity import CORPUS, QUESTIONS, chatml
from helpers import run, samples
from ragbench._registry import installed_registry
from ragbench._retrieval.index import build_index

pytestmark = pytest.mark.model
pytest.importorskip("transformers")

RECORDED = json.loads((TEST_DATA / "flashrag_real_model" / "expected.json").read_text(encoding="utf-8"))
# FlashRAG's pipeline: ragbench's system and the system arguments that say FlashRAG's HF generator made its calls
SYSTEMS = {
    "zero_shot": ("closed_book", {}),
    "naive": ("vanilla", {}),
    "iter_retgen": ("iter_retgen", {}),
    "ircot": ("ircot", {"framework": "hf"}),
    "self_ask": ("self_ask", {"framework": "hf"}),
}
TASK = "nq_open_flashrag"


@pytest.fixture(scope="module")
def flashrag_bm25_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("index") / "bm25"
    build_index(CORPUS, folder, "flashrag_bm25", {"language": "en"}, progress=False, registry=installed_registry())
    return folder


def recorded_questions(tmp_path: Path, recorded: dict[str, Any]) -> Path:
    """The questions a method was recorded on: all six, or for a multi-step method the few in its `questions`
    (each of its rounds is a generate call over a prompt of up to some 2,000 tokens on CPU)."""
    if "questions" not in recorded:
        return QUESTIONS
    subset = tmp_path / "questions.jsonl"
    subset.write_text(
        "".join(
            line + "\n"
            for line in QUESTIONS.read_text(encoding="utf-8").splitlines()
            if json.loads(line)["id"] in recorded["questions"]
        ),
        encoding="utf-8",
    )
    return subset


def model_input(request: dict[str, Any]) -> str:
    """The string FlashRAG's generator tokenised for a request: the prompt (a pipeline that renders one string
    for a chat model too), or the messages through the chat template."""
    return request["prompt"] if "prompt" in request else chatml(request["messages"])


def run_system(tmp_path: Path, index: Path, method: str) -> list[dict[str, Any]]:
    """ragbench's system for FlashRAG's `method` on the embedded model and `flashrag_bm25`: its sample lines."""
    system, system_args = SYSTEMS[method]
    run(
        tmp_path,
        name=method,
        tasks=[TASK],
        system=system,
        system_args=system_args,
        data={TASK: str(recorded_questions(tmp_path, RECORDED["methods"][method]))},
        model="hf:embedded",
        model_args={"chat": True},
        retriever="flashrag_bm25",
        metrics=[],
        bootstrap_iters=10,
        retriever_args={"index": str(index), "corpus": str(CORPUS)},
    )
    return samples(tmp_path / method, TASK)


def calls(records: list[dict[str, Any]]) -> tuple[Counter[str], Counter[str]]:
    """The model inputs and the search queries of a run's traces (the scheduler orders them across examples)."""
    steps = [step for record in records for step in record["trace"]]
    return (
        Counter(model_input(step["request"]) for step in steps if step["kind"] == "llm"),
        Counter(step["request"]["query"] for step in steps if step["kind"] == "retrieval"),
    )


def recorded_prompts(recorded: dict[str, Any]) -> Counter[str]:
    return Counter(text for call in recorded["calls"] for text in call["inputs"])


COMPLETED = sorted(method for method in SYSTEMS if "error" not in RECORDED["methods"][method])
RAISED = sorted(method for method in SYSTEMS if "error" in RECORDED["methods"][method])


@pytest.mark.parametrize("method", COMPLETED)
def test_the_system_on_the_embedded_model_prompts_searches_and_answers_as_flashrags_pipeline(
    tmp_path, flashrag_bm25_index, method
):
    recorded = RECORDED["methods"][method]
    records = run_system(tmp_path, flashrag_bm25_index, method)
    assert {record["id"]: record["prediction"]["answer"] for record in records} == recorded["predictions"]
    assert calls(records) == (recorded_prompts(recorded), Counter(recorded["searches"]))


@pytest.mark.parametrize("method", RAISED)
def test_where_flashrags_bm25_raised_on_a_wordless_query_the_system_counts_a_retrieval_failure_naming_it(
    tmp_path, flashrag_bm25_index, method
):
    """The model's thought was empty (it began with a stop string), FlashRAG searched it and bm25s raised,
    ending the whole run; here the same calls come before it and each example that searched it fails alone,
    counted, its error naming the query (the departure docs/systems.md names for `flashrag_bm25`)."""
    recorded = RECORDED["methods"][method]
    assert recorded["error"].startswith("ValueError: The query_tokens must be a list of list of tokens")
    records = run_system(tmp_path, flashrag_bm25_index, method)
    assert calls(records) == (
        recorded_prompts(recorded),
        Counter(recorded["searches"]) + Counter(recorded["failed_searches"]),
    )
    failed = Counter(
        step["request"]["query"]
        for record in records
        for step in record["trace"]
        if step["kind"] == "retrieval" and step["error"]
    )
    assert failed == Counter(recorded["failed_searches"])
    assert sorted(record["error"] for record in records if record["error"]) == sorted(
        f"RetrievalError: retriever flashrag_bm25: query {json.dumps(query)} has no word once lower-cased and "
        "stopwords dropped; FlashRAG's BM25 raises on it"
        for query in recorded["failed_searches"]
    )

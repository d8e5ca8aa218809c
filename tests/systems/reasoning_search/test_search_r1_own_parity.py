"""Call-for-call parity of `search_r1_own` with Search-R1's own inference loops, run unchanged
(tests/data/search_r1_own/record_upstream.py says how, with which versions): PeterGriffinJin/Search-R1 infer.py at
commit a14dc3a (scored by its verl/utils/reward_score/qa_em.py) and texttron/BrowseComp-Plus
search_agent/search_r1_client.py at commit 97c637c (its hits formatted by its search_r1_server.py). Both ran
against the fake model of tests/support/search_r1_own_fake.py (SmolLM2-135M-Instruct's tokenizer, with and without its
chat template) and hits of ragbench's BM25; ragbench runs the same fake on the `scripted` engine (the recorded
tokens of each continuation, so the stop strings and the token limit cut them where the recording's did).

Compared per question and in order: every model input (the prompt text; a chat request rendered with the
tokenizer's template and the text it continues), the sampling, every search sent, and the outcome: infer.py's
prediction as qa_em.py reads it; search_r1_client.py's run file (status, search count, docids, every item).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragbench.testing import build_index, installed_registry
from support import paths
from support.flashrag_parity import chatml, recording_tokenizer
from support.helpers import run, samples
from support.search_r1_own_fake import continuation

DATA = paths.DATA / "search_r1_own"
TASKS = {"infer": "nq_open_flashrag", "browsecomp_plus": "browsecomp_plus"}


def fixture(name: str) -> dict[str, Any]:
    recorded: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return recorded


def recorded_tokens() -> dict[str, list[str]]:
    """Each continuation of the recordings in the recording tokenizer's tokens."""
    tokens = {}
    for name in ("infer", "browsecomp_plus"):
        if (DATA / f"{name}.json").is_file():
            for form in fixture(name)["forms"].values():
                tokens.update({call["continuation"]: call["tokens"] for call in form["calls"]})
    return tokens


TOKENS = recorded_tokens()


def model_text(request: Any) -> str:
    """What the fake model reads: the prompt, or the chat rendered with the recording tokenizer's template and
    the assistant's text it continues."""
    if request.prompt is not None:
        return str(request.prompt)
    *head, last = request.message_dicts()
    return chatml(head) + last["content"] if last["role"] == "assistant" else chatml([*head, last])


def fake_model(request: Any) -> dict[str, Any]:
    """The fake's continuation as a per-token answer; the model's end is the end of its tokens."""
    written, _ = continuation(model_text(request))
    tokens = TOKENS.get(written) or [recording_tokenizer().decode([i]) for i in recording_tokenizer().encode(written)]
    return {"response": written, "tokens": tokens, "logprobs": [{token: 0.0} for token in tokens]}


def ragbench_run(tmp_path: Path, name: str, form: str, live: bool = False) -> Path:
    """ragbench's side of fixture `name` in `form`: the run folder. The infer fixture searches ragbench's BM25 over
    its corpus; the browsecomp_plus one replays the recorded hits of that BM25 (`live`: searches it), which
    lack the query the fake server fails."""
    corpus = DATA / ("corpus.jsonl" if name == "infer" else "browsecomp_plus/corpus.jsonl")
    if live or name == "infer":
        index = tmp_path / "index"
        build_index(corpus, index, "bm25", progress=False, registry=installed_registry())
        retriever: dict[str, Any] = {"retriever": "bm25", "retriever_args": {"index": str(index)}}
    else:
        searches = tmp_path / "searches.jsonl"
        hits = json.loads((DATA / "hits.json").read_text(encoding="utf-8"))[name]
        searches.write_text(
            "".join(
                json.dumps({"query": q, "ids": [h["docid"] for h in hs], "scores": [h["score"] for h in hs]}) + "\n"
                for q, hs in hits.items()
            )
        )
        retriever = {"retriever": "replay", "retriever_args": {"file": str(searches), "corpus": str(corpus)}}
    system_args: dict[str, Any] = {}
    if name == "browsecomp_plus":
        tokenizer = paths.DATA / "search_agent" / "tokenizer"
        system_args = {"client": "browsecomp_plus", "snippet_max_tokens": 12, "snippet_tokenizer": str(tokenizer)}
    data = DATA / ("questions.jsonl" if name == "infer" else "browsecomp_plus/queries.jsonl")
    run(
        tmp_path,
        tasks=[TASKS[name]],
        data={TASKS[name]: str(data)},
        system="search_r1_own",
        system_args=system_args,
        model="scripted:test_search_r1_own_parity:fake_model",
        model_args={"chat": form == "chat"},
        metrics=["browsecomp_plus_retrieval" if name == "browsecomp_plus" else "em"],
        **retriever,
    )
    return tmp_path / "run"


def ragbench_side(tmp_path: Path, name: str, form: str) -> dict[str, dict[str, Any]]:
    """Per example: its model inputs, sampling and searches in order, its prediction and extras."""
    run_dir = ragbench_run(tmp_path, name, form)
    out = {}
    for line in samples(run_dir, TASKS[name]):
        steps = line["trace"]
        calls = [s for s in steps if s["kind"] == "llm"]
        out[line["id"]] = {
            "inputs": [model_text_of(call) for call in calls],
            "sampling": [call["request"]["sampling"] for call in calls],
            "searches": [s["request"]["query"] for s in steps if s["kind"] == "retrieval"],
            "prediction": line["prediction"],
        }
    return out


def model_text_of(call: dict[str, Any]) -> str:
    request = call["request"]
    if request.get("prompt") is not None:
        return str(request["prompt"])
    messages = [{"role": m[0], "content": m[1]} if isinstance(m, list) else m for m in request["messages"]]
    *head, last = messages
    return chatml(head) + last["content"] if last["role"] == "assistant" else chatml(messages)


@pytest.mark.parametrize("form", ["plain", "chat"])
def test_search_r1_own_makes_infer_pys_calls_and_prediction(tmp_path, form):
    theirs = fixture("infer")["forms"][form]
    (ours,) = ragbench_side(tmp_path, "infer", form).values()
    assert ours["inputs"] == [call["input"] for call in theirs["calls"]]
    # each round's input extends the previous one's, nothing re-rendered: an engine's prefix cache serves it
    assert all(later.startswith(earlier) for earlier, later in zip(ours["inputs"], ours["inputs"][1:]))
    assert ours["searches"] == [search["queries"][0] for search in theirs["searches"]]
    for sampling, call in zip(ours["sampling"], theirs["calls"]):
        assert sampling["max_tokens"] == call["sampling"]["max_new_tokens"]
        assert sampling["temperature"] == call["sampling"]["temperature"]
        assert sampling["stop"] == call["sampling"]["stop"]
    assert ours["prediction"]["answer"] == theirs["prediction"]


@pytest.mark.parametrize("form", ["plain", "chat"])
def test_search_r1_own_makes_browsecomp_plus_clients_calls_and_run_files(tmp_path, form):
    theirs = fixture("browsecomp_plus")["forms"][form]
    ours = ragbench_side(tmp_path, "browsecomp_plus", form)
    queries = [json.loads(line) for line in (DATA / "browsecomp_plus" / "queries.jsonl").read_text().splitlines()]
    inputs = [call["input"] for call in theirs["calls"]]  # one question after another, in the file's order
    searches = [search["query"] for search in theirs["searches"]]
    assert [text for q in queries for text in ours[q["query_id"]]["inputs"]] == inputs
    assert [query for q in queries for query in ours[q["query_id"]]["searches"]] == searches
    keys = ("status", "tool_call_counts", "retrieved_docids", "result")
    assert {qid: {key: example["prediction"]["extras"][key] for key in keys} for qid, example in ours.items()} == (
        theirs["runs"]
    )

"""A final answer the server cuts short (the Responses API's status "incomplete") is recorded "incomplete" by
`search_agent`'s openai_client, as BrowseComp-Plus's openai_client records it, so `browsecomp_plus` neither judges it
nor counts its confidence (evaluate_run.py skips any file whose status is not "completed")."""

from __future__ import annotations

import json

import pytest

from helpers import run, samples
from search_agent_fake import FakeAgentServer
from test_browsecomp_plus_retrieval import corpus_index  # noqa: F401 (a fixture)
from test_browsecomp_plus_task import SAMPLE


@pytest.mark.parametrize("api", ["responses", "chat_completions"])
def test_an_answer_cut_short_is_recorded_incomplete_and_not_judged(tmp_path, corpus_index, api):
    queries = tmp_path / "queries.jsonl"
    lines = (SAMPLE / "data" / "browsecomp_plus_decrypted.jsonl").read_text().splitlines()[:2]
    first = json.loads(lines[0])
    first["query"] += " (an answer cut short)"
    queries.write_text(json.dumps(first) + "\n" + lines[1] + "\n")
    server = FakeAgentServer()
    try:
        run(
            tmp_path,
            tasks=["browsecomp_plus"],
            data={"browsecomp_plus": str(queries)},
            system="search_agent",
            system_args={"snippet_max_tokens": 0},
            model="openai:agent",
            model_args={"base_url": server.base_url, "api": api},
            retriever="bm25",
            retriever_args={"index": str(corpus_index)},
            judges=["scripted:browsecomp_plus_fake_judge:reply"],
        )
    finally:
        server.stop()
    by_id = {line["id"]: line for line in samples(tmp_path / "run", "browsecomp_plus")}
    cut, answered = by_id["11"], by_id["12"]
    assert cut["prediction"]["extras"]["status"] == "incomplete"
    assert cut["prediction"]["extras"]["result"][-1]["type"] == "output_text"  # kept, as the client keeps it
    assert (cut["scores"]["accuracy"], cut["scores"]["confidence"], cut.get("judge_trace")) == (0.0, None, None)
    assert answered["prediction"]["extras"]["status"] == "completed"
    assert answered["scores"]["confidence"] == 80.0 and len(answered["judge_trace"]) == 1

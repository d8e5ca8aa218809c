"""Rules of BrowseComp-Plus's openai_client that `search_agent` keeps, end to end: a final answer the server cuts
short (the Responses API's status "incomplete") is recorded "incomplete", so `browsecomp_plus` neither judges it nor
counts its confidence (evaluate_run.py skips any file whose status is not "completed"); an "o" model is sent no
temperature or top_p, and its run replays offline."""

from __future__ import annotations

import json

import pytest
from test_browsecomp_plus_retrieval import corpus_index  # noqa: F401 (a fixture)
from test_browsecomp_plus_task import SAMPLE
from test_search_agent_parity import DATA

from support.helpers import cli_here, run, samples
from support.search_agent_fake import FakeAgentServer


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
            judges=["scripted:support.browsecomp_plus_fake_judge:reply"],
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


def test_an_o_models_run_replays_offline_sending_what_it_sent(tmp_path):
    """openai_client sends an "o" model no temperature or top_p; `--replay` re-executes the run with the recorded
    engine's model name (not the recording's file name), so every call is the recorded one."""
    server = FakeAgentServer()
    try:
        run(
            tmp_path,
            tasks=["fictional_multihop"],
            data={"fictional_multihop": str(DATA / "questions.jsonl")},
            system="search_agent",
            system_args={"snippet_max_tokens": 0, "temperature": 0.5, "top_p": 0.9},
            model="openai:o3",
            model_args={"base_url": server.base_url, "api": "responses"},
            limit=2,
        )
    finally:
        server.stop()
    assert all("temperature" not in body and "top_p" not in body for body in server.bodies)
    replayed = cli_here("--replay", str(tmp_path / "run"), "--output", str(tmp_path / "replayed"), "--no-progress")
    assert replayed.returncode == 0, replayed.stderr
    ours = samples(tmp_path / "replayed", "fictional_multihop")
    assert [line["prediction"]["extras"]["status"] for line in ours] == ["completed", "completed"]

"""The `search_agent` system's loop on fictional_multihop (its corpus, BM25): the conversation only grows, turns
are batched across examples, the budgets of turns and tokens end an example and say so, snippets are cut in
tokens of the tokenizer named, settings it cannot run with are refused before the run, and qwen_client ends after
qwen_agent's 20 requests and asks again after an empty answer. Parity with
BrowseComp-Plus's clients is tests/systems/search_agent/test_search_agent_parity.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragbench.api import ConfigError
from support import paths
from support.helpers import preflight_problems, run, samples
from support.search_agent_fake import FakeAgentServer

TASK = "fictional_multihop"
SEARCH_THEN_ANSWER = [
    {"pattern": '"docid"', "response": "Zealion"},
    {
        "pattern": "Question: ",
        "response": {"tool_calls": [{"id": "c0", "name": "search", "arguments": {"query": "Rufea"}}]},
    },
]
ALWAYS_SEARCH = [SEARCH_THEN_ANSWER[1] | {"pattern": ""}]


def scripted(tmp_path: Path, rules: list[dict[str, Any]]) -> str:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules))
    return f"scripted:{path}"


def agent_run(tmp_path: Path, model: str, limit: int = 1, **config: Any) -> tuple[dict[str, Any], list[dict]]:
    system_args = {"snippet_max_tokens": 0, **config.pop("system_args", {})}
    results = run(
        tmp_path, tasks=[TASK], system="search_agent", model=model, limit=limit, system_args=system_args, **config
    )
    return results, samples(tmp_path / "run", TASK)


def served_run(tmp_path: Path, limit: int = 1, **system_args: Any) -> tuple[list[dict[str, Any]], list[dict]]:
    """A run against the fake server: its requests (arrival order) and the sample lines."""
    server = FakeAgentServer()
    try:
        _, lines = agent_run(
            tmp_path, "openai:agent", limit, model_args={"base_url": server.base_url}, system_args=system_args
        )
    finally:
        server.stop()
    return server.requests, lines


def test_each_turn_sends_the_previous_turns_messages_and_what_that_turn_added(tmp_path):
    requests, lines = served_run(tmp_path, limit=3, get_document=True)
    for line in lines:
        mine = [r["messages"] for r in requests if f"Question: {line['question']}\n" in r["messages"][0]["content"]]
        assert len(mine) == line["prediction"]["extras"]["turns"] == 3
        for before, after in zip(mine, mine[1:]):
            assert after[: len(before)] == before
            assert [m["role"] for m in after[len(before) :]] == ["assistant", "tool"]


def test_the_turns_of_all_examples_go_to_the_engine_in_batches(tmp_path):
    results, lines = agent_run(tmp_path, scripted(tmp_path, SEARCH_THEN_ANSWER), limit=4)
    assert [line["prediction"]["answer"] for line in lines] == ["Zealion"] * 4
    assert (results["cost"]["llm_calls"], results["cost"]["batches"]) == (8, 2)


def test_the_run_reports_how_examples_ended_and_their_turns_and_calls_per_tool(tmp_path):
    results, _ = agent_run(tmp_path, scripted(tmp_path, SEARCH_THEN_ANSWER), limit=2)
    assert results["system_stats"][TASK] == {
        "examples": 2,
        "status": {"completed": 2},
        "mean_turns": 2,
        "mean_calls": {"search": 1},
        "invalid_tool_calls": 0,
    }


def test_the_turn_budget_ends_an_example_that_keeps_calling_tools(tmp_path):
    _, [line] = agent_run(tmp_path, scripted(tmp_path, ALWAYS_SEARCH), system_args={"max_turns": 3})
    extras = line["prediction"]["extras"]
    assert (line["prediction"]["answer"], extras["status"], extras["turns"]) == ("", "turns", 3)
    assert extras["tool_call_counts"] == {"search": 3}
    assert [item["type"] for item in extras["result"]] == ["tool_call"] * 3


def test_each_turn_may_write_what_the_turns_before_left_of_the_token_budget(tmp_path):
    requests, [line] = served_run(tmp_path, token_budget=40)
    first = 29  # the fake's count of the first turn's output (its tool call's text)
    assert [r["max_tokens"] for r in requests] == [40, 40 - first]
    assert line["prediction"]["extras"]["status"] == "completed"


def test_the_token_budget_ends_the_example_once_spent(tmp_path):
    requests, [line] = served_run(tmp_path, token_budget=20)
    extras = line["prediction"]["extras"]
    assert [r["max_tokens"] for r in requests] == [20]
    assert (line["prediction"]["answer"], extras["status"], extras["turns"], extras["output_tokens"]) == (
        "",
        "tokens",
        1,
        29,
    )


def test_the_oss_client_gives_every_turn_the_whole_token_budget(tmp_path):
    requests, [line] = served_run(tmp_path, client="oss_client", token_budget=30)
    assert [r["max_tokens"] for r in requests] == [30, 30]
    assert line["prediction"]["extras"]["status"] == "completed"


def test_snippets_are_cut_to_the_first_tokens_of_the_tokenizer_named(tmp_path):
    pytest.importorskip("transformers")  # ragbench[hf]
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from transformers import PreTrainedTokenizerFast

    words = ["[UNK]", "Rufea", "Beabax", "born", "painter"]
    model = Tokenizer(WordLevel({word: i for i, word in enumerate(words)}, unk_token="[UNK]"))
    model.pre_tokenizer = Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=model, unk_token="[UNK]").save_pretrained(tmp_path / "tokenizer")
    _, [line] = agent_run(
        tmp_path,
        scripted(tmp_path, SEARCH_THEN_ANSWER),
        system_args={"snippet_max_tokens": 3, "snippet_tokenizer": str(tmp_path / "tokenizer")},
    )
    hits = json.loads(line["prediction"]["extras"]["result"][0]["output"])
    assert hits[0]["docid"] == "person-0124"  # "Rufea Beabax\nRufea Beabax (born 1941) is a painter ..."
    assert hits[0]["snippet"] == "Rufea Beabax Rufea"


def test_a_snippet_tokenizer_that_is_not_on_disk_is_refused_before_the_run(tmp_path):
    with pytest.raises(ConfigError, match="not on disk"):
        agent_run(
            tmp_path,
            scripted(tmp_path, SEARCH_THEN_ANSWER),
            system_args={"snippet_max_tokens": 512, "snippet_tokenizer": str(tmp_path / "absent")},
        )


def test_the_embedded_model_is_refused_for_what_it_cannot_do_first_and_every_problem_at_once(tmp_path):
    """SmolLM2's chat template renders no tools: the first line says so (another model is the fix), and the
    options that would also be needed (a snippet tokenizer on disk, a tool parser) follow in the same message."""
    first, *others = preflight_problems(
        tmp_path,
        tasks=[TASK],
        system="search_agent",
        model="hf:embedded",
        limit=1,
        system_args={"snippet_tokenizer": str(tmp_path / "absent")},
    )
    assert first.startswith("--model hf:embedded: search_agent on fictional_multihop needs a model that calls tools")
    assert "never reads `tools`" in first
    assert any("not on disk" in line for line in others)
    assert any("tool_parser=NAME" in line for line in others)


def test_get_document_without_citations_is_refused_browsecomp_plus_has_no_such_prompt(tmp_path):
    with pytest.raises(ConfigError, match="no prompt with get_document and no citations"):
        agent_run(
            tmp_path,
            scripted(tmp_path, SEARCH_THEN_ANSWER),
            system_args={"get_document": True, "citations": False},
        )


def test_a_corpus_that_is_not_a_file_is_refused_before_the_run(tmp_path):
    with pytest.raises(
        ConfigError, match="not found; pass --corpus with an existing .tsv or .jsonl file or a datasets"
    ):
        agent_run(tmp_path, scripted(tmp_path, SEARCH_THEN_ANSWER), system_args={"corpus": str(tmp_path / "absent")})


def test_get_document_reads_a_saved_dataset_corpus_as_the_same_rows_in_jsonl(tmp_path):
    datasets = pytest.importorskip("datasets")
    corpus = paths.REPO / "tasks" / "fictional_multihop" / "data" / "corpus.jsonl"
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    datasets.disable_progress_bars()
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "saved"))
    from_jsonl, _ = served_run(tmp_path / "jsonl", get_document=True, corpus=str(corpus))
    from_folder, lines = served_run(tmp_path / "folder", get_document=True, corpus=str(tmp_path / "saved"))
    assert from_folder == from_jsonl
    assert lines[0]["prediction"]["extras"]["tool_call_counts"]["get_document"] == 1


QWEN_SEARCH = '<tool_call>\n{"name": "search-server-search", "arguments": {"query": "Rufea"}}\n</tool_call>'


def test_qwen_client_makes_at_most_20_requests_as_qwen_agent_does(tmp_path):
    """qwen_agent's MAX_LLM_CALL_PER_RUN: the example ends after 20 requests however many calls are left; qwen_client
    says "incomplete", ragbench names the budget."""
    model = scripted(tmp_path, [{"pattern": "", "response": QWEN_SEARCH}])
    _, [line] = agent_run(tmp_path, model, system_args={"client": "qwen_client"})
    extras = line["prediction"]["extras"]
    assert (line["prediction"]["answer"], extras["status"], extras["turns"]) == ("", "turns", 20)
    assert extras["tool_call_counts"] == {"search": 20}


def test_qwen_client_asks_again_after_an_answer_with_nothing_in_it(tmp_path):
    """An empty answer adds nothing to qwen_agent's messages, so the same conversation is sent again, and again."""
    rules = [{"pattern": '"docid"', "response": "Zealion"}, {"pattern": "", "response": ""}]
    _, [line] = agent_run(tmp_path, scripted(tmp_path, rules), system_args={"client": "qwen_client", "max_turns": 4})
    extras = line["prediction"]["extras"]
    assert (extras["status"], extras["turns"], extras["result"]) == ("turns", 4, [])
    sent = [step["request"]["messages"] for step in line["trace"] if step["kind"] == "llm"]
    assert len(sent) == 4 and all(messages == sent[0] for messages in sent)

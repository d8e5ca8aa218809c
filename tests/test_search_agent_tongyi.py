"""`search_agent` with `client=tongyi_client` where the parity fixture does not reach (tests/
test_search_agent_parity.py compares it with BrowseComp-Plus's tongyi_client request for request): the
conversation's text as tongyi_client counts it, the last turn asked past the context limit, and a context
tokenizer that is not on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers import search_agent_samples
from ragbench.plugins.search_agent import tongyi_client
from ragbench.plugins.search_agent.prompts import TONGYI_CONTEXT_EXCEEDED
from search_agent_fake import FakeAgentServer

DATA = Path(__file__).parent / "data" / "search_agent"
QUESTION = '{"answers": ["Zealion"], "id": "q0000", "question": "Where is Rufea Beabax?"}\n'


def test_the_conversation_is_counted_as_qwen_agents_text_completion_prompt():
    """build_text_completion_prompt of qwen-agent 0.0.27 (allow_special=True) for these conversations, as it
    printed them: an empty assistant message opened after a last user message, a last assistant message open."""
    asked = [{"role": "system", "content": "sys"}, {"role": "user", "content": "q"}]
    assert tongyi_client.text_prompt(asked) == (
        "<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n"
    )
    answered = [*asked, {"role": "assistant", "content": "a <tool_call>x</tool_call>"}]
    assert tongyi_client.text_prompt(answered) == (
        "<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n"
        "a <tool_call>x</tool_call>"
    )


def tongyi_run(tmp_path: Path, **system_args: Any) -> tuple[list[dict[str, Any]], FakeAgentServer]:
    pytest.importorskip("transformers")  # ragbench[hf], for the tokenizers
    data = tmp_path / "questions.jsonl"
    data.write_text(QUESTION, encoding="utf-8")
    server = FakeAgentServer()
    try:
        options = {"client": "tongyi_client", "snippet_max_tokens": 0} | system_args
        return search_agent_samples(tmp_path, server.base_url, data, options), server
    finally:
        server.stop()


def test_past_the_context_limit_one_last_turn_is_asked_for_the_answer(tmp_path, monkeypatch):
    """With the limit at 10 tokens the first turn's search passes it: its result is replaced by the request for
    an answer, one more turn is asked, and the example ends on it (the fake searches again: no answer tags)."""
    monkeypatch.setattr(tongyi_client, "MAX_CONTEXT_TOKENS", 10)
    (line,), server = tongyi_run(tmp_path, context_tokenizer=str(DATA / "tokenizer"))
    assert len(server.bodies) == 2
    assert server.bodies[1]["messages"][-1] == {"role": "user", "content": TONGYI_CONTEXT_EXCEEDED}
    extras = line["prediction"]["extras"]
    assert extras["status"] == "format error: generate an answer as token limit reached"
    assert extras["turns"] == 2 and line["prediction"]["answer"] == ""


def test_a_context_tokenizer_not_on_disk_is_named(tmp_path):
    (line,), server = tongyi_run(tmp_path, context_tokenizer=str(tmp_path / "nowhere"))
    assert "context_tokenizer=PATH" in str(line["error"])
    assert str(tmp_path / "nowhere") in str(line["error"])

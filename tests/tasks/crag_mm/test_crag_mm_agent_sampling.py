"""What the answer call of `agent=closed` sends, as the API agent upstream picks by the model's name sends it
(closed_model_agents.py at 36b6b4b): GPTAgent `temperature=0.0, top_p=1.0, n=1` and no token limit, and to a model
whose name starts with "gpt-5" `top_p=1.0, n=1` alone; ClaudeAgent a limit of 2,048; GeminiAgent none. Checked on the
body the `openai` engine sends a local server. `--system-arg max_tokens=none` leaves the limit to the server for
any agent; an explicit value is sent."""

from __future__ import annotations

import pytest
from test_engine_openai import FakeServer

from ragbench.tasks.crag_mm.prompting import CragMMPrompting
from ragbench.tasks.crag_mm.synthetic import write_dataset
from ragbench.testing import ScriptedLLM, run_eval
from support.crag_mm_helpers import png, tokenizer_dir


def dataset(tmp_path):
    turns = [{"interaction_id": "c1-0", "domain": 0, "query_category": 0, "dynamism": 0, "query": "what is this?"}]
    answers = [{"interaction_id": "c1-0", "ans_full": "A vase."}]
    row = {"session_id": "c1", "image": {"bytes": png((3, 9, 9)), "path": None}, "image_url": None}
    return write_dataset(tmp_path / "data", [row | {"turns": [turns[0] | {"image_quality": 0}], "answers": answers}])


def sent(tmp_path, model: str, agent: str, **system_args) -> dict:
    """The body of the answer call to `model` on a local OpenAI-compatible server."""
    server = FakeServer(reply=lambda body: "A vase.")
    try:
        run_eval(
            "crag_mm_single",
            "closed_book",
            f"openai:{model}",
            data=dataset(tmp_path),
            judges=[ScriptedLLM("Result: CORRECT")],
            task_args={"tokenizer": tokenizer_dir(), "agent": agent},
            system_args=system_args,
            model_args={"base_url": server.base_url},
        )
    finally:
        server.stop()
    [request] = server.requests
    return {k: v for k, v in request["body"].items() if k != "messages"}


@pytest.mark.parametrize(
    "model, body",
    [
        ("gpt-4o", {"model": "gpt-4o", "temperature": 0.0, "top_p": 1.0, "n": 1}),
        ("gpt-5-mini", {"model": "gpt-5-mini", "top_p": 1.0, "n": 1}),
    ],
)
def test_the_gpt_agents_request_is_upstreams(tmp_path, model, body):
    assert sent(tmp_path, model, "closed") == body


def test_a_token_limit_given_is_sent_and_none_leaves_it_to_the_server(tmp_path):
    assert sent(tmp_path / "a", "gpt-4o", "closed", max_tokens=1000)["max_tokens"] == 1000
    assert "max_tokens" not in sent(tmp_path / "b", "llava", "open", max_tokens="none")
    assert sent(tmp_path / "c", "llava", "open")["max_tokens"] == 1000  # VlmAgent's


@pytest.mark.parametrize(
    "model, expected",
    [
        ("claude-3-7-sonnet-20250219", {"max_tokens": 2048, "temperature": 0.0, "top_p": 1.0}),
        ("gemini-2.5-flash", {"temperature": 0.0, "top_p": 1.0, "left_to_server": ("max_tokens",)}),
        ("gpt-5", {"top_p": 1.0, "left_to_server": ("max_tokens", "temperature")}),
        ("gpt-4.1", {"temperature": 0.0, "top_p": 1.0, "left_to_server": ("max_tokens",)}),
    ],
)
def test_each_api_agents_own_fields(model, expected):
    given = {"temperature": 0.0, "top_p": 1.0, "left_to_server": ("max_tokens",)}
    assert CragMMPrompting("closed").answer_sampling(model, given) == expected
    assert CragMMPrompting("open").answer_sampling(model, given) == given

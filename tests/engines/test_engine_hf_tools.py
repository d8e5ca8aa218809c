"""The `hf` engine's tool calling: a tool request's tools reach the chat template's `tools=` (a tool call's
arguments as the object they hold, as vLLM passes them), a template that never reads tools is refused rather than
left to drop them (the embedded SmolLM2's), and the engine reads the calls with the parser its option names."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from conftest import needs
from ragbench._engines.hf.engine import HFEngine
from ragbench.api.engines import Request, Response
from ragbench.testing import embedded_model

pytestmark = needs("transformers")  # not imported while the tests are collected

SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    },
}
CALLED = [
    {"role": "user", "content": "Who wrote it?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "author"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "[1] Ann"},
]
# The tool parts of Qwen 2.5's template (hermes format), shortened: the tools in the system turn, each call in a
# <tool_call> block with its arguments as JSON, each result in a <tool_response> block.
HERMES_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\n<tools>{% for tool in tools %}\n{{ tool | tojson }}{% endfor %}\n</tools>"
    "<|im_end|>\n{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ message.content }}\n</tool_response>"
    "<|im_end|>\n"
    "{%- elif message.tool_calls %}<|im_start|>assistant\n{%- for call in message.tool_calls %}\n<tool_call>\n"
    '{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}\n</tool_call>'
    "{%- endfor %}<|im_end|>\n"
    "{%- else %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}"
)


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(embedded_model())  # what the engine loads (hf/loading.py)


def encode(tokenizer, request: Request) -> str:
    return tokenizer.decode(HFEngine.encode(SimpleNamespace(tokenizer=tokenizer), request))


def test_a_template_that_never_reads_tools_is_refused(tokenizer):
    with pytest.raises(ValueError, match="does not render tools"):
        encode(tokenizer, Request.chat(CALLED, tools=[SEARCH]))
    assert "Who wrote it?" in encode(tokenizer, Request.chat(CALLED[:1]))


def test_tools_and_tool_turns_reach_the_template(tokenizer, monkeypatch):
    monkeypatch.setattr(tokenizer, "chat_template", HERMES_TEMPLATE)
    text = encode(tokenizer, Request.chat(CALLED, tools=[SEARCH]))
    assert '<tools>{"type": "function", "function": {"name": "search", "description": "Search."' in text
    assert '<tool_call>\n{"name": "search", "arguments": {"q": "author"}}\n</tool_call>' in text
    assert "<tool_response>\n[1] Ann\n</tool_response>" in text and text.endswith("<|im_start|>assistant")


def test_the_engines_options_name_a_known_parser():
    assert HFEngine.preflight("embedded", {"tool_parser": "hermes"}) == []
    assert "tool_parser" in " ".join(HFEngine.preflight("embedded", {"tool_parser": "qwen-ish"}))


def test_the_preflight_asks_for_a_parser_where_a_system_offers_tools():
    from ragbench._run.plan.engine_checks import needs_problems
    from ragbench.api.engines import EngineNeeds

    need = EngineNeeds(system="search_agent on browsecomp_plus", tools=True)
    _, cannot, unmet = needs_problems(HFEngine, "embedded", {}, [need])
    assert "never reads `tools`" in cannot[0]  # SmolLM2's template: the reason to choose another model
    assert "tool_parser=NAME" in unmet[0]


def test_the_preflight_refuses_a_model_whose_chat_template_would_drop_the_tools(tokenizer, tmp_path, monkeypatch):
    from ragbench._run.plan.engine_checks import needs_problems
    from ragbench.api.engines import EngineNeeds

    need = EngineNeeds(system="search_agent on fictional_multihop", tools=True)
    tokenizer.save_pretrained(tmp_path / "plain")  # SmolLM2's template: no tools
    monkeypatch.setattr(tokenizer, "chat_template", HERMES_TEMPLATE)
    tokenizer.save_pretrained(tmp_path / "hermes")
    [problem] = needs_problems(HFEngine, str(tmp_path / "plain"), {"tool_parser": "hermes"}, [need])[1]
    assert problem.startswith(
        "search_agent on fictional_multihop needs a model that calls tools: the chat template of "
    )
    assert "never reads `tools`" in problem
    assert needs_problems(HFEngine, str(tmp_path / "hermes"), {"tool_parser": "hermes"}, [need])[1] == []


def test_a_hermes_tool_request_is_decoded_with_its_special_tokens(tokenizer, monkeypatch):
    """As vLLM's Hermes parser adjusts a tool request: a <tool_call> that a tokenizer marks special stays in the
    text the parser reads; a request without tools, or whose tool_choice is "none", is decoded as asked."""
    monkeypatch.setattr(tokenizer, "chat_template", HERMES_TEMPLATE)
    called = '<tool_call>\n{"name": "search", "arguments": {"q": "x"}}\n</tool_call>'
    decoded: dict[bool, int] = {}

    def run_fitting(chunk, sampling):
        decoded[sampling.skip_special_tokens] = len(chunk)
        return [Response(texts=[called]) for _ in chunk]

    engine = SimpleNamespace(tokenizer=tokenizer, model_obj=object(), context_length=None, device="cuda", kind="hf")
    engine.__dict__.update(tool_parser="hermes", _lock=threading.Lock(), _run_fitting=run_fitting)
    engine.__dict__.update(encode=lambda request: HFEngine.encode(engine, request), token_id=lambda token: 0)
    engine._chunks = lambda items, sampling: [items]
    asked = CALLED[:1]
    tool, ruled_out, plain = HFEngine.generate(
        engine,
        [
            Request.chat(asked, tools=[SEARCH]),
            Request.chat(asked, tools=[SEARCH], tool_choice="none"),
            Request.chat(asked),
        ],
    )
    assert decoded == {False: 1, True: 2}
    assert tool.tool_calls[0].arguments == {"q": "x"} and not ruled_out.tool_calls and plain.text == called


def test_the_embedded_models_template_is_known_to_drop_tools_before_it_is_converted(tmp_path):
    from ragbench._engines.local.tokenizers import tools_template_problem

    assert "never reads `tools`" in (tools_template_problem("embedded", str(tmp_path)) or "")  # nothing converted

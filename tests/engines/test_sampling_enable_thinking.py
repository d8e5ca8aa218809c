"""`Sampling.enable_thinking`: the chat template's switch (Qwen3's `enable_thinking`), given to the template by the
local engines (`chat_prompt_ids`, hf and vllm) where a request sets it, and left to the template's default where
not; part of the request's cache key where set, and of no other request's key."""

from __future__ import annotations

import pytest
from test_chat_continuation import ids, tokenizer

from ragbench.api.engines import Request, Sampling, chat_prompt_ids

# Qwen3's way: an empty think block opens the answer when thinking is off
QWEN3_LIKE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}</ search >\n{% endif %}{% endif %}"
)
CHAT = [{"role": "user", "content": "Q ?"}]


@pytest.mark.parametrize(("thinking", "opened"), [(None, ""), (True, ""), (False, "</ search >\n")])
def test_the_template_gets_enable_thinking_only_where_the_request_sets_it(thinking, opened):
    tok = tokenizer()
    tok.chat_template = QWEN3_LIKE
    rendered = "<|im_start|>user\nQ ?<|im_end|>\n<|im_start|>assistant\n" + opened
    assert chat_prompt_ids(tok, CHAT, enable_thinking=thinking) == ids(tok, rendered)


def test_enable_thinking_is_in_the_request_and_its_cache_key_only_where_set():
    plain = Request.chat(CHAT, Sampling.make(temperature=0.7, top_k=20))
    off = Request.chat(CHAT, Sampling.make(temperature=0.7, top_k=20, enable_thinking=False))
    on = Request.chat(CHAT, Sampling.make(temperature=0.7, top_k=20, enable_thinking=True))
    assert "enable_thinking" not in plain.to_dict()["sampling"]
    assert off.to_dict()["sampling"]["enable_thinking"] is False and on.to_dict()["sampling"]["enable_thinking"]
    assert len({r.cache_key("e") for r in (plain, off, on)}) == 3

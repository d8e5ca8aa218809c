"""A chat request that ends with the assistant's own text is continued by the local engines (`hf`, `vllm`:
`chat_prompt_ids`): the template renders that text open, with no end of turn and no new assistant turn, as
FlashRAG's local chat form appends what the model wrote after the rendered template."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import given
from hypothesis import strategies as st

from ragbench.api.engines import chat_prompt_ids

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
WORDS = ["Q", "?", "I", "think", "<", "search", ">", "x", "</", "|", "im_start", "im_end", "user", "assistant"]


def tokenizer() -> PreTrainedTokenizerFast:
    """A word-level tokenizer with the ChatML template (tokenizers and transformers imported here, not while the
    tests are collected)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    model = Tokenizer(models.WordLevel({w: i for i, w in enumerate(["[UNK]", *WORDS])}, unk_token="[UNK]"))
    model.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=model)
    fast.chat_template = CHATML
    return fast


def ids(tok: PreTrainedTokenizerFast, text: str) -> list[int]:
    return tok(text, add_special_tokens=False)["input_ids"]


def test_a_conversation_ending_with_the_assistants_text_is_continued():
    tok = tokenizer()
    written = "I think <search> x </search>"
    messages = [{"role": "user", "content": "Q ?"}, {"role": "assistant", "content": written}]
    rendered = f"<|im_start|>user\nQ ?<|im_end|>\n<|im_start|>assistant\n{written}"
    assert chat_prompt_ids(tok, messages) == ids(tok, rendered)


@given(st.lists(st.sampled_from(["user", "assistant"]), min_size=1, max_size=4))
def test_any_other_conversation_gets_a_new_assistant_turn(roles):
    tok = tokenizer()
    messages = [{"role": role, "content": "x" if role == "user" else ""} for role in roles]
    rendered = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    assert chat_prompt_ids(tok, messages) == ids(tok, rendered + "<|im_start|>assistant\n")

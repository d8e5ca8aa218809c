"""FlashRAG's `input_tokens` (flashrag/evaluator/metrics.py `CountToken`): the tokens of the prompt the system
sent, its mean the task's value (FlashRAG's `avg_input_tokens`). FlashRAG counts `data.prompt`, the prompt of
the answer's generation; here it is the prompt of the system's last LLM call (in call order; for the built-in
systems, the answer's). tests/tasks/flashrag/test_flashrag_bleu_tokens.py pins the counts to values from running upstream's file."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragbench.api import ConfigError, Example, Metric, MetricDeclaration, Prediction, Score, ScoringContext
from ragbench.api.data import JsonObject, JsonValue, json_list, json_object
from ragbench.api.engines import local_tokenizer
from ragbench.api.text import tiktoken_encoding
from ragbench.api.trace import trace_prompts

TokenCount = Callable[[str], "int | None"]


def openai_encoding_name(name: str) -> str | None:
    """The tiktoken encoding of an OpenAI model name (gpt-4: cl100k_base), None for any other name."""
    try:
        from tiktoken.model import encoding_name_for_model
    except ImportError as exc:
        raise ConfigError(f"metric input_tokens needs tiktoken ({exc}); run `pip install ragbench[flashrag]`") from exc
    try:
        return encoding_name_for_model(name)
    except KeyError:
        return None


def text_counter(name: str) -> tuple[TokenCount, Any]:
    """(count, HF tokenizer or None), as `CountToken` chooses: an OpenAI model name counts with its tiktoken
    encoding (`encode`; None for special-token text such as <|endoftext|>, which that call refuses), anything
    else is a Hugging Face tokenizer on disk counted with `tokenize` (no special tokens added)."""
    encoding_name = openai_encoding_name(name)
    if encoding_name is not None:
        encoding = tiktoken_encoding(encoding_name, "metric input_tokens", "flashrag")
        special = encoding.special_tokens_set
        return (lambda text: None if any(token in text for token in special) else len(encoding.encode(text))), None
    tokenizer = local_tokenizer(name)
    if tokenizer is None:
        raise ConfigError(
            f"metric input_tokens: tokenizer {name!r} is neither an OpenAI model name tiktoken knows "
            "nor a Hugging Face tokenizer on disk (a folder, or a name in the local cache); pass "
            "--metric-arg input_tokens.tokenizer=PATH"
        )
    return (lambda text: len(tokenizer.tokenize(text))), tokenizer


class InputTokens(Metric):
    """Tokens of the last LLM call's prompt (`tokenizer`: an OpenAI model name, default gpt-4, or a tokenizer
    folder). A chat is rendered as FlashRAG renders one: with a Hugging Face tokenizer's chat template, ready
    for the answer (FlashRAG's prompt for a local chat model); else - tiktoken, on which FlashRAG cannot count
    a message list, or a tokenizer without a template - its non-empty contents joined by blank lines
    (FlashRAG's prompt without chat). Not scorable: no LLM call in the trace, or a prompt the tiktoken
    encoding refuses (special-token text such as <|endoftext|>, where FlashRAG raises)."""

    name = "input_tokens"
    declares = MetricDeclaration(
        higher_is_better=None,
        value_range=(0, None),
    )

    def __init__(self, tokenizer: str = "gpt-4") -> None:
        self.tokenizer = str(tokenizer)
        self.count, self.chat_tokenizer = text_counter(self.tokenizer)

    def rendered(self, prompt: JsonValue) -> str:
        """A traced prompt's text: a text as it is, chat messages through the tokenizer's chat template (without
        one: their contents, a blank line apart)."""
        if isinstance(prompt, str):
            return prompt
        messages = [json_object(message) for message in json_list(prompt)]
        if getattr(self.chat_tokenizer, "chat_template", None):
            rendered: str = self.chat_tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            return rendered
        return "\n\n".join(str(message["content"]) for message in messages if message["content"])

    def score(self, example: Example, prediction: Prediction, ctx: ScoringContext | None = None) -> Score:
        prompts = trace_prompts(step.to_dict() for step in prediction.trace)
        if not prompts:
            return None
        return self.count(self.rendered(prompts[-1]))

    def config(self) -> JsonObject:
        return {"name": self.name, "tokenizer": self.tokenizer}

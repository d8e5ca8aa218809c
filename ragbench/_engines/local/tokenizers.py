"""Tokenizer helpers the `hf` and `vllm` engines share: a conversation as the token ids of its chat
template, whole vocabulary entries (Self-RAG's reflection tokens), a model's tokenizer read from disk
without its weights (what the pre-flight checks vocabulary entries with), and token counts by it (`TokenCounter`:
the scripted engine's `tokenizer=`, `ragbench estimate`'s examples' lengths)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from ..._storage.cache_root import cache_root
from ..._values.json_values import JsonObject
from ..chat_messages import ChatMessage
from .embedded import CONVERTED_NAME, EMBEDDED_GGUF, embedded_model_dir, is_embedded
from .tool_parsers import template_messages


class _TemplateOptions(TypedDict, total=False):
    continue_final_message: bool
    tools: list[JsonObject]


def continues_final_message(messages: list[ChatMessage]) -> bool:
    """Whether a conversation ends with text the assistant wrote and goes on writing (a non-empty last
    assistant message: FlashRAG's reasoning methods append what the model wrote after the template)."""
    return bool(messages) and messages[-1]["role"] == "assistant" and bool(messages[-1]["content"])


def chat_prompt_ids(
    tokenizer: Any,
    messages: list[ChatMessage],
    tools: list[JsonObject] | None = None,
    enable_thinking: bool | None = None,
) -> list[int]:
    """Token ids of a conversation rendered with the tokenizer's chat template, ready for the
    assistant's turn, or, where it ends with the assistant's own text, open after that text for the
    model to continue. The template writes its own special tokens, so none are added again. `tools`
    (the OpenAI form) go to the template's `tools=`, a tool call's arguments as the object they hold; a
    template that never reads `tools` is refused (ValueError), not left to drop them. `enable_thinking` (where not
    None) goes to the template as that keyword (Qwen3's switch)."""
    continued: _TemplateOptions = {"continue_final_message": True} if continues_final_message(messages) else {}
    if tools:
        if not renders_tools(tokenizer):
            raise ValueError("the model's chat template does not render tools (it never reads `tools`)")
        continued["tools"] = tools
    rendered = tokenizer.apply_chat_template(
        template_messages(messages),
        tokenize=False,
        **continued,
        add_generation_prompt="continue_final_message" not in continued,
        **({} if enable_thinking is None else {"enable_thinking": enable_thinking}),
    )
    if isinstance(rendered, str):
        return list(tokenizer(rendered, add_special_tokens=False)["input_ids"])
    if isinstance(rendered, dict) or hasattr(rendered, "keys"):  # a tokenizer that always tokenizes
        rendered = rendered["input_ids"]
    return [int(token) for token in rendered]


def vocabulary_id(tokenizer: Any, token: str) -> int | None:
    """The id of `token` as one whole vocabulary entry (Self-RAG's "[Relevant]"), or None when the
    tokenizer has no such single entry."""
    tid = tokenizer.convert_tokens_to_ids(token)
    return tid if isinstance(tid, int) and tokenizer.convert_ids_to_tokens(tid) == token else None


def renders_tools(tokenizer: Any) -> bool:
    """Whether the tokenizer's chat template reads `tools`: one that does not would drop a request's tools."""
    return "tools" in str(getattr(tokenizer, "chat_template", None) or "")


def tools_template_problem(model: str, cache_dir: str | None = None) -> str | None:
    """Why `model`'s chat template cannot offer it tools, found from its tokenizer on disk; None where it can
    or where the tokenizer cannot be read before the engine loads (the engine refuses each request then)."""
    tokenizer = local_tokenizer(model, cache_dir)
    if tokenizer is None and not is_embedded(model) or tokenizer is not None and renders_tools(tokenizer):
        return None  # the embedded model's template (SmolLM2's) renders no tools, converted yet or not
    return (
        f"the chat template of {model} never reads `tools`, so the model would not see them; use a model whose "
        "template renders tools (e.g. Qwen2.5/Qwen3 or Llama 3.1 Instruct)"
    )


def local_tokenizer(model: str, cache_dir: str | None = None) -> Any | None:
    """The tokenizer of a model on disk (a folder, a hub name in the local cache, the embedded model once
    converted), loaded without its weights: what the pre-flight checks vocabulary entries with. None when
    it cannot be loaded that way; the engine's own load then reports why."""
    if is_embedded(model):
        model = str((Path(cache_dir).expanduser() if cache_dir else cache_root()) / CONVERTED_NAME)
        if not Path(model).is_dir():
            return None
    if model.endswith(".gguf") or not _maybe_on_disk(model):
        return None
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(model, local_files_only=True)
    except Exception:  # not on disk, or not a folder transformers reads: left to the engine's load
        return None


def _maybe_on_disk(model: str) -> bool:
    """Whether transformers' local load can find `model` at all: a folder, or a hub name with a folder in the hub
    cache. Told without importing transformers (seconds): a model that is neither (a scripted engine's rules file,
    an API model's name) has no tokenizer on disk."""
    from huggingface_hub.constants import HF_HUB_CACHE
    from huggingface_hub.file_download import repo_folder_name

    if Path(model).is_dir():
        return True
    try:
        cached = Path(HF_HUB_CACHE) / repo_folder_name(repo_id=model, repo_type="model")
    except ValueError:  # huggingface_hub's HFValidationError: no hub name, so nothing of it in the hub cache
        return False
    return cached.is_dir()


def missing_entries(tokenizer: Any | None, names: Sequence[str]) -> list[str] | None:
    """Of `names`, those that are not single entries of `tokenizer`'s vocabulary; None without a tokenizer."""
    return None if tokenizer is None else [name for name in names if vocabulary_id(tokenizer, name) is None]


@dataclass(frozen=True)
class TokenCounter:
    """A model's tokenizer: what it is (`name`) and the token counts of texts (`count`, no special tokens added)."""

    name: str
    count: Callable[[list[str]], list[int]]


def folder_counter(name: str, cache_dir: str | None = None) -> TokenCounter | None:
    """A Hugging Face tokenizer on disk: a folder's tokenizer.json read by `tokenizers` (no transformers import),
    else transformers' local load (a hub name in the cache, a folder of another kind, the embedded GGUF file)."""
    embedded = is_embedded(name)
    folder = (Path(cache_dir).expanduser() if cache_dir else cache_root()) / CONVERTED_NAME if embedded else None
    label = "SmolLM2-135M-Instruct (embedded)" if embedded else name
    file = (folder or Path(name).expanduser()) / "tokenizer.json"
    try:
        if file.is_file():
            from tokenizers import Tokenizer

            fast = Tokenizer.from_file(str(file))
            return TokenCounter(label, lambda texts: [len(e.ids) for e in fast.encode_batch(texts, False)])
        loaded = embedded_gguf_tokenizer() if embedded else local_tokenizer(name, cache_dir)
    except Exception:  # tokenizers missing, or a file it cannot read (it raises a bare Exception)
        return None
    if loaded is None:
        return None
    return TokenCounter(label, lambda texts: [len(ids) for ids in loaded(texts, add_special_tokens=False)["input_ids"]])


@functools.cache
def embedded_gguf_tokenizer() -> Any | None:
    """The embedded model's tokenizer from its GGUF file (not converted yet; read once a process: seconds of
    parsing); None where it cannot be read."""
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(embedded_model_dir(), gguf_file=EMBEDDED_GGUF)
    except Exception:  # not installed, or transformers/gguf missing: no tokenizer at hand
        return None

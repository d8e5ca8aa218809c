"""Search results cut to their first tokens, as BrowseComp-Plus's clients and search server show them
(search_agent/openai_client.py `_search`, searcher/search_r1_server.py `format_results_for_api`, at commit
97c637c): the first N tokens of a tokenizer read from disk, decoded without special tokens."""

from __future__ import annotations

from typing import Any

from .._engines.local.tokenizers import local_tokenizer
from .._errors import ConfigError


def load_snippet_tokenizer(owner: str, name: str) -> Any:
    """The tokenizer snippets are counted in, read from disk only; a ConfigError naming `owner` (the system)
    and how to proceed where it is not there."""
    tokenizer = local_tokenizer(name)
    if tokenizer is None:
        raise ConfigError(
            f"{owner}: snippets are cut in tokens of {name}, whose tokenizer is not on disk: download it "
            f"(huggingface-cli download {name}), name another (snippet_tokenizer=PATH) or show whole texts "
            "(snippet_max_tokens=0)"
        )
    return tokenizer


def first_tokens(text: str, tokenizer: Any, max_tokens: int) -> str:
    """The snippet of a hit: its first `max_tokens` tokens decoded without special tokens, the text itself
    when it is no longer."""
    tokens = tokenizer.encode(text, add_special_tokens=False)
    if len(tokens) > max_tokens:
        decoded: str = tokenizer.decode(tokens[:max_tokens], skip_special_tokens=True)
        return decoded
    return text


class Snippets:
    """Texts cut to their first `max_tokens` tokens of the tokenizer `name` (0: whole texts), read from disk when
    first needed: a system calls `check` from its own, so a tokenizer that is not on disk is a pre-flight problem
    said with the run's others rather than an error at construction that hides them."""

    def __init__(self, owner: str, name: str, max_tokens: int) -> None:
        self.owner, self.name, self.max_tokens = owner, name, max_tokens
        self._tokenizer: Any = None

    def check(self) -> None:
        if self.max_tokens:
            self._loaded()

    def cut(self, text: str) -> str:
        return first_tokens(text, self._loaded(), self.max_tokens) if self.max_tokens else text

    def _loaded(self) -> Any:
        if self._tokenizer is None:
            self._tokenizer = load_snippet_tokenizer(self.owner, self.name)
        return self._tokenizer

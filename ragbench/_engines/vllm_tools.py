"""The `vllm` engine's tool-call parser: `--model-arg tool_parser=NAME` names one of vLLM's own parsers
(ToolParserManager, what `vllm serve --tool-call-parser NAME` uses: hermes, llama3_json, mistral, qwen3_xml, ...),
else one of ragbench's (tool_parsers.py). vLLM's parser reads the text as its server would for a chat request
with the same messages and tools; the call ids it makes at random are replaced by ids derived from the text, so
an answer, and its cache entry, is the same on every run."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

from .._errors import ConfigError
from .._values.llm_calls import Request
from .._values.tool_calls import ToolCall
from .tool_parsers import PARSER_NAMES, TOOL_PARSERS, Parsed, call_id

# Where vLLM keeps them: newer releases moved the parsers out of the OpenAI server package.
_MANAGER_MODULES = ("vllm.tool_parsers", "vllm.entrypoints.openai.tool_parsers")
_PROTOCOL_MODULES = ("vllm.entrypoints.openai.protocol", "vllm.entrypoints.openai.chat_completion.protocol")

RequestParser = Callable[[Request, str], Parsed]


def _attribute(modules: tuple[str, ...], name: str) -> Any:
    for module in modules:
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if found is not None:
            return found
    return None


def vllm_tool_parser(name: str, tokenizer: Any) -> RequestParser:
    """The parser `name` names: vLLM's when its ToolParserManager has it, else ragbench's; a ConfigError
    when neither has it."""
    manager = _attribute(_MANAGER_MODULES, "ToolParserManager")
    parser_class = None
    if manager is not None:
        try:
            parser_class = manager.get_tool_parser(name)
        except KeyError:
            parser_class = None
    if parser_class is None:
        if name not in TOOL_PARSERS:
            raise ConfigError(
                f"vllm engine: no tool parser named {name!r} in vLLM (its ToolParserManager) or "
                f"ragbench ({', '.join(PARSER_NAMES)})"
            )
        own = TOOL_PARSERS[name]
        return lambda request, text: own(text)
    parser, chat_request = parser_class(tokenizer), _attribute(_PROTOCOL_MODULES, "ChatCompletionRequest")

    def parse(request: Request, text: str) -> Parsed:
        asked = chat_request(
            model="ragbench",
            messages=request.message_dicts(),
            tools=request.tool_dicts(),
            **({"tool_choice": request.tool_choice_payload()} if request.tool_choice else {}),
        )
        found = parser.extract_tool_calls(text, asked)
        if not found.tools_called:
            return text, ()
        return found.content or "", tuple(
            ToolCall(call_id(text, n), call.function.name, call.function.arguments)
            for n, call in enumerate(found.tool_calls)
        )

    return parse


class ToolCallReader:
    """An engine's tool_parser option, its parser made on first use (it needs the model's tokenizer)."""

    def __init__(self, name: str | None, tokenizer: Callable[[], Any]) -> None:
        self.name = name
        self._tokenizer = tokenizer
        self._parse: RequestParser | None = None

    def parser(self, request: Request) -> Callable[[str], Parsed] | None:
        """What reads the calls in the texts answering `request`; None when it offers no tools or no parser is named."""
        parse = self.load() if request.tools else None
        return None if parse is None else functools.partial(parse, request)

    def load(self) -> RequestParser | None:
        """The named parser, made now if not yet (a ConfigError when no one has it); None without a name."""
        if self._parse is None and self.name is not None:
            self._parse = vllm_tool_parser(self.name, self._tokenizer())
        return self._parse

"""The `vllm` engine's tool-call parser: `--model-arg tool_parser=NAME` names one of vLLM's own parsers
(ToolParserManager, what `vllm serve --tool-call-parser NAME` uses: hermes, llama3_json, mistral, qwen3_xml, ...),
else one of ragbench's (local/tool_parsers.py).

vLLM's parser is applied to a request as vLLM's chat server applies it (`--enable-auto-tool-choice`), which
`LLM.chat` does not: before generation the parser adjusts the request (`adjust_request`: Hermes keeps special
tokens in the text, so a `<tool_call>` a model's tokenizer marks special is not dropped; a structural tag or a
JSON schema may constrain the calls), and those sampling settings go to the request's SamplingParams; after it,
the text is read by the server's own parse step (vllm.parser's Parser on vLLM releases that have it, the tool
parser's `extract_tool_calls` before them). Where vLLM finds no call, ragbench's parser of the name (hermes,
llama3_json), which reads a text as vLLM's does, keeps a call whose JSON does not parse, as on every engine. A
request whose tool_choice is "none" is neither adjusted nor parsed (tool_parsers.with_tool_calls). The call ids
vLLM makes at random are replaced by ids derived from the text, so an answer, and its cache entry, is the same on
every run."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

from ..._errors import ConfigError
from ..._values.llm_request import Request
from ..._values.tool_calls import ToolCall
from ..chat_messages import chat_messages, openai_message
from ..local.tool_parsers import PARSER_NAMES, TOOL_PARSERS, Parsed, call_id, tool_sampling

# Where vLLM keeps them: newer releases moved the parsers out of the OpenAI server package.
_MANAGER_MODULES = ("vllm.tool_parsers", "vllm.entrypoints.openai.tool_parsers")
_PROTOCOL_MODULES = ("vllm.entrypoints.openai.protocol", "vllm.entrypoints.openai.chat_completion.protocol")
_SERVER_PARSER_MODULES = ("vllm.parser",)  # the server's Parser (tool parser + request adjustment), vLLM >= 0.3x


def _attribute(modules: tuple[str, ...], name: str) -> Any:
    for module in modules:
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if found is not None:
            return found
    return None


class ServerToolParser:
    """vLLM's tool parser `name` as its chat server applies it to a request."""

    def __init__(self, name: str, tool_parser_class: type, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.chat_request = _attribute(_PROTOCOL_MODULES, "ChatCompletionRequest")
        manager = _attribute(_SERVER_PARSER_MODULES, "ParserManager")
        self.server_parser = (
            None if manager is None else manager.get_parser(tool_parser_name=name, enable_auto_tools=True)
        )
        self.tool_parser_class = tool_parser_class
        # ragbench's parser of the name, which reads a text as vLLM's does but keeps a call whose JSON does not parse
        self.own = TOOL_PARSERS.get(name)
        # One parser per set of tools offered, made once: making one can cost a pass over the vocabulary (Llama's
        # looks up <|python_tag|>: 60 ms at 49k entries), which every turn of every example would pay again.
        self._parsers: dict[tuple[Any, ...], Any] = {}

    def adjusted(self, request: Request) -> tuple[Any, Any]:
        """(the parser for `request`, the ChatCompletionRequest the server would generate and parse with)."""
        asked = self.chat_request(
            model="ragbench",
            messages=[openai_message(turn) for turn in chat_messages(request)],  # images as data URLs
            tools=request.tool_dicts(),
            **({"tool_choice": request.tool_choice_payload()} if request.tool_choice else {}),
        )
        parser = self._parsers.get(request.tools)
        if parser is None and self.server_parser is not None:
            parser = self._parsers[request.tools] = self.server_parser(self.tokenizer, asked.tools)
        elif parser is None:  # a tool parser of a release before vllm.parser takes the tokenizer alone
            parser = self._parsers[request.tools] = self.tool_parser_class(self.tokenizer)
        if request.tool_choice != "none":
            asked = parser.adjust_request(asked)
        return parser, asked

    def sampling(self, request: Request) -> dict[str, Any]:
        """The SamplingParams settings the server's adjustment of `request` makes."""
        _, asked = self.adjusted(request)
        settings = {key: getattr(asked, key, None) for key in ("skip_special_tokens", "structured_outputs")}
        return {key: value for key, value in settings.items() if value is not None}

    def parse(self, request: Request, text: str) -> Parsed:
        parser, asked = self.adjusted(request)
        if self.server_parser is not None:
            _, content, calls = parser.parse(text, asked, enable_auto_tools=True)
            named = [(call.name, call.arguments) for call in calls or ()]
        else:
            found = parser.extract_tool_calls(text, asked)
            content = found.content if found.tools_called else text
            named = [(call.function.name, call.function.arguments) for call in found.tool_calls or ()]
        if not named and self.own is not None:  # vLLM reads a call whose JSON does not parse as text: kept
            return self.own(text)
        if not named:
            return text if content is None else content, ()
        return content or "", tuple(ToolCall(call_id(text, n), *call) for n, call in enumerate(named))


def vllm_tool_parser(name: str, tokenizer: Any) -> ServerToolParser | None:
    """vLLM's parser `name` as its server applies it; None when vLLM has none of the name but ragbench has; a
    ConfigError when neither has it."""
    manager = _attribute(_MANAGER_MODULES, "ToolParserManager")
    try:
        found = None if manager is None else manager.get_tool_parser(name)
    except KeyError:
        found = None
    if found is not None:
        return ServerToolParser(name, found, tokenizer)
    if name not in TOOL_PARSERS:
        raise ConfigError(
            f"vllm engine: no tool parser named {name!r} in vLLM (its ToolParserManager) or "
            f"ragbench ({', '.join(PARSER_NAMES)})"
        )
    return None


class ToolCallReader:
    """An engine's tool_parser option, its parser made on first use (it needs the model's tokenizer)."""

    def __init__(self, name: str | None, tokenizer: Callable[[], Any]) -> None:
        self.name = name
        self._tokenizer = tokenizer
        self._server: ServerToolParser | None = None
        self._loaded = False

    def parser(self, request: Request) -> Callable[[str], Parsed] | None:
        """What reads the calls in the texts answering `request`; None when it offers no tools or no parser is named."""
        if not request.tools or not self.load():
            return None
        if self._server is None:
            return TOOL_PARSERS[self.name or ""]
        return functools.partial(self._server.parse, request)

    def sampling(self, request: Request) -> dict[str, Any]:
        """The SamplingParams settings vLLM's server would make for `request` (ragbench's parser: as vLLM's does)."""
        if not request.tools or not self.load():
            return {}
        if self._server is None:
            return {"skip_special_tokens": tool_sampling(request, self.name).skip_special_tokens}
        return self._server.sampling(request)

    def load(self) -> bool:
        """Makes the named parser now if not yet (a ConfigError when no one has it); False without a name."""
        if not self._loaded and self.name is not None:
            self._server, self._loaded = vllm_tool_parser(self.name, self._tokenizer()), True
        return self._loaded

"""Native tool calling in an LLM call: the functions a request offers (`Tool`) and the calls a model makes
(`ToolCall`), which a chat turn carries (ragbench._values.chat_turns). Both frozen: a request holding them stays
hashable and its cache key covers them.

A tool call keeps the argument text the model wrote (`raw_arguments`); its parsed JSON (`arguments`) is
read from it, None with a note (`error`) when the text is not JSON or is nested more than MAX_DEPTH levels
(ragbench._values.json_values: what it could not write back, and what its readers' recursion could fail on):
such a call is kept and counted, never dropped or repaired.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .json_values import JsonObject, TooDeep, json_object, json_of
from .tool_arguments import arguments_problem

TOOL_CHOICES = ("auto", "none", "required")  # any other choice names one of the request's tools
MCP_KEYS = ("server_label", "server_url")


@dataclass(frozen=True)
class Tool:
    """A function the model may call, in the OpenAI `tools` form, kept as its JSON text (key order as given,
    so a server sees the definition exactly as the system wrote it); or a remote MCP server whose tools the
    API's own servers call (`{"type": "mcp", "server_label", "server_url"}`, the Responses API's form), which
    only an engine that `connects_mcp` sends."""

    definition_json: str

    @classmethod
    def of(cls, definition: Mapping[str, Any]) -> Tool:
        """From `{"type": "function", "function": {"name", "description", "parameters"}}`, the bare
        function `{"name", "description", "parameters"}`, or `{"type": "mcp", "server_label": NAME,
        "server_url": URL}`; a ValueError says what is missing."""
        if definition.get("type") == "mcp":
            if not all(isinstance(definition.get(key), str) and definition[key] for key in MCP_KEYS):
                raise ValueError(f"an MCP server tool needs a server_label and a server_url: {dict(definition)!r:.80}")
            return cls(json.dumps(definition, ensure_ascii=False))
        function = definition.get("function") if definition.get("type") == "function" else None
        if function is None:
            if "name" not in definition:
                raise ValueError(
                    f"a tool is {{'type': 'function', 'function': {{'name': ...}}}}, not {dict(definition)!r:.80}"
                )
            function, definition = definition, {"type": "function", "function": dict(definition)}
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str) or not function["name"]:
            raise ValueError(f"a tool's function needs a name: {dict(definition)!r:.80}")
        if not isinstance(function.get("parameters", {}), Mapping):
            raise ValueError(f"tool {function['name']!r}: parameters must be a JSON schema object")
        return cls(json.dumps(definition, ensure_ascii=False))

    @property
    def definition(self) -> JsonObject:
        """The OpenAI form (a new dict on every read)."""
        out: JsonObject = json.loads(self.definition_json)
        return out

    @property
    def function(self) -> JsonObject:
        """The function's declaration (name, description, parameters); empty for a remote MCP server."""
        return json_object(self.definition.get("function"))

    @property
    def remote_mcp(self) -> bool:
        """A remote MCP server (its tools called by the API's servers), not a function."""
        return bool(self.definition.get("type") == "mcp")

    @property
    def name(self) -> str:
        """The function's name; a remote MCP server's label."""
        definition = self.definition
        name = definition["server_label"] if definition.get("type") == "mcp" else self.function["name"]
        return name if isinstance(name, str) else str(name)  # a function's name is checked a string when made


def read_arguments(text: str) -> tuple[Any, str | None]:
    """A call's argument text as `json.loads` reads it (a key written twice: its last value), and None; or None
    and why it is not read: no JSON, or nested deeper than the MAX_DEPTH levels anything ragbench writes may be
    (its readers would fail on them)."""
    try:
        return json_of(text), None
    except TooDeep as exc:
        return None, f"arguments are {exc}: not read"
    except ValueError as exc:
        return None, f"arguments are not JSON: {exc}"


@dataclass(frozen=True)
class ToolCall:
    """One call the model made: its id (the `tool_call_id` its result answers), the function's name and the
    argument text as the model wrote it."""

    id: str
    name: str
    raw_arguments: str

    @property
    def arguments(self) -> Any:
        """The arguments as parsed JSON; None when `raw_arguments` is not JSON (see `error`)."""
        return read_arguments(self.raw_arguments)[0]

    @property
    def error(self) -> str | None:
        """Why the arguments could not be read, or None."""
        return read_arguments(self.raw_arguments)[1]

    def problem(self, tools: Sequence[Tool]) -> str | None:
        """Why this call's arguments, JSON, do not fit the parameters of the tool of its name among `tools`
        (ragbench._values.tool_arguments); None where they fit, are not JSON (`error`) or no tool has its name."""
        value, error = read_arguments(self.raw_arguments)
        tool = next((tool for tool in tools if tool.name == self.name and not tool.remote_mcp), None)
        if error is not None or tool is None:
            return None
        return arguments_problem(tool.function.get("parameters", {}), value)

    def to_dict(self) -> JsonObject:
        """The OpenAI form of an assistant message's call (arguments as text, as servers send them)."""
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.raw_arguments}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolCall:
        """From the OpenAI form (`to_dict`); the arguments may be given as a JSON value instead of its text."""
        function = data.get("function", data)
        arguments = function.get("arguments", "")
        return cls(
            id=str(data.get("id", "")),
            name=function["name"],
            raw_arguments=arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False),
        )


def tools_of(tools: Sequence[Mapping[str, Any] | Tool] | None) -> tuple[Tool, ...]:
    return tuple(t if isinstance(t, Tool) else Tool.of(t) for t in tools or ())


def tool_choice_of(choice: str | Mapping[str, Any] | None, tools: Sequence[Tool]) -> str | None:
    """ "auto", "none", "required", or the name of one of `tools` (given as a name or as the OpenAI form
    `{"type": "function", "function": {"name": ...}}`); None: the server's default."""
    if isinstance(choice, Mapping):
        choice = choice.get("function", {}).get("name")
        if not isinstance(choice, str):
            raise ValueError("a named tool choice is {'type': 'function', 'function': {'name': ...}}")
    if choice is None or choice in TOOL_CHOICES:
        if choice is not None and not tools:
            raise ValueError(f"tool_choice {choice!r} without tools")
        return choice
    if choice not in {tool.name for tool in tools}:
        raise ValueError(f"tool_choice {choice!r} is none of {', '.join(TOOL_CHOICES)} or the request's tools' names")
    return choice


def tool_choice_payload(choice: str) -> str | JsonObject:
    """The OpenAI form of a tool choice."""
    return choice if choice in TOOL_CHOICES else {"type": "function", "function": {"name": choice}}

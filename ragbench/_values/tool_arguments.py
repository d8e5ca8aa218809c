"""A tool call's arguments against the tool's own parameter schema (the JSON Schema of its `parameters`), checked
where the call is answered: a model served with open weights writes whatever it writes (`{"query": 5}`, `null`,
a key the tool has not), and a server only holds it to the schema where it constrains the output.

The arguments are the JSON value the call's text parses to, as `json.loads` reads it (the agents' clients read
them so): a key written twice counts as its last value. Of JSON Schema, the keywords tools' parameters use are
checked: `type` (one or a list of "object", "array", "string", "integer", "number", "boolean", "null", or these upper-cased as a Gemini Schema
names them; an integer is a whole number, 1.0 included; no bool is a number), `properties`, `required`,
`additionalProperties` (false, or the schema of the other keys' values), `items` (one schema), `enum` and
`const`; other keywords (`minLength`, `pattern`, `anyOf` ...) are not checked. A schema that is no object
checks nothing (JSON Schema's `true`), `false` nothing passes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import Any

from .json_values import JsonObject, JsonValue

_TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")
_SHOWN = 60  # characters of a value a problem quotes


class InvalidArguments(ValueError):
    """A call's arguments that do not fit its tool's parameters; its text says where and how."""


def arguments_problem(parameters: Any, arguments: Any) -> str | None:
    """Why `arguments` (a call's parsed arguments) do not fit the tool's `parameters` schema (the first problem
    found, naming where: `arguments["query"]: 5 is not a string`), or None where they fit."""
    return next(_problems(parameters, arguments, "arguments"), None)


def checked_arguments(parameters: Any, arguments: Any) -> Any:
    """`arguments`, where they fit `parameters`; else InvalidArguments saying why."""
    problem = arguments_problem(parameters, arguments)
    if problem is not None:
        raise InvalidArguments(problem)
    return arguments


def _problems(schema: Any, value: Any, where: str) -> Iterator[str]:
    if schema is False:
        yield f"{_at(where)}no value is allowed"
        return
    if not isinstance(schema, Mapping):
        return
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if isinstance(kinds, list):  # a Gemini Schema's names are these upper-cased (OBJECT, STRING)
        kinds = [kind.lower() if isinstance(kind, str) else kind for kind in kinds]
    if isinstance(kinds, list) and not any(_is(kind, value) for kind in kinds):
        yield f"{_at(where)}{_shown(value)} is not {' or '.join(_article(str(kind)) for kind in kinds)}"
        return
    if "const" in schema and not _equal(value, schema["const"]):
        yield f"{_at(where)}{_shown(value)} is not {_shown(schema['const'])}"
    if isinstance(schema.get("enum"), list) and not any(_equal(value, option) for option in schema["enum"]):
        yield f"{_at(where)}{_shown(value)} is none of {', '.join(_shown(option) for option in schema['enum'])}"
    if isinstance(value, dict):
        yield from _object_problems(schema, value, where)
    elif isinstance(value, list) and "items" in schema:
        for n, item in enumerate(value):
            yield from _problems(schema["items"], item, f"{where}[{n}]")


def _object_problems(schema: Mapping[str, JsonValue], value: JsonObject, where: str) -> Iterator[str]:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    for name in required if isinstance(required, list) else ():
        if isinstance(name, str) and name not in value:
            yield f"{_key(where, name)} is required"
    other = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            yield from _problems(properties[name], item, _key(where, name))
        elif other is False:
            yield f"{_key(where, name)} is not a parameter of this tool (it takes {_names(properties)})"
        else:
            yield from _problems(other, item, _key(where, name))


def _is(kind: Any, value: Any) -> bool:
    if kind == "integer":
        return _number(value) and (isinstance(value, int) or value.is_integer())
    if kind == "number":
        return _number(value)
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    return kind in types and isinstance(value, types[kind])


def _number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _equal(value: Any, expected: Any) -> bool:
    """JSON equality: a bool equals only a bool (Python's `True == 1` does not hold in JSON)."""
    if isinstance(value, bool) or isinstance(expected, bool):
        return type(value) is type(expected) and value == expected
    return bool(value == expected)


def _at(where: str) -> str:
    return f"{where}: "


def _key(where: str, name: str) -> str:
    return f"{where}[{json.dumps(name, ensure_ascii=False)}]"


def _names(properties: Mapping[str, JsonValue]) -> str:
    return ", ".join(json.dumps(name) for name in properties) or "no parameters"


def _article(kind: str) -> str:
    return {"object": "an object", "array": "an array", "integer": "an integer", "null": "null"}.get(
        kind, f"a {kind}" if kind in _TYPES else repr(kind)
    )


def _shown(value: Any) -> str:
    """A value as a problem quotes it: a scalar as JSON (cut short), an object or array by its kind and size
    (never serialised: it may be nested as deep as the parser allowed)."""
    if isinstance(value, dict):
        return f"an object of {len(value)} key(s)"
    if isinstance(value, list):
        return f"an array of {len(value)} item(s)"
    text = (
        json.dumps(value, ensure_ascii=False) if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
    )
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."

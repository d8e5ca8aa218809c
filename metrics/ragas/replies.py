"""A judge's reply read as ragas reads it: instructor's JSON mode takes the last JSON object in the text and
pydantic validates it against the prompt's output model in lax mode (an integer field takes 1, 1.0, true or
"1"; a string field only a string). `structured` is that reading over the output's JSON Schema."""

from __future__ import annotations

import json
import re
from typing import Any

_INTEGER_TEXT = re.compile(r"\s*[+-]?\d+\s*")


class Unparsed(ValueError):
    """A reply with no JSON object that fits the prompt's output schema."""


def last_json_object(text: str) -> dict[str, Any] | None:
    """The last complete JSON object in `text` (instructor's extract_json_from_codeblock keeps the last)."""
    decoder = json.JSONDecoder()
    found, index = None, text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except ValueError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            found = value
        index = text.find("{", end)
    return found


def structured(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The reply's object, checked and coerced as the output model's fields say; `Unparsed` otherwise."""
    value = last_json_object(text)
    if value is None:
        raise Unparsed("the reply holds no JSON object")
    conformed: dict[str, Any] = _conform(value, schema, schema.get("$defs", {}), "reply")
    return conformed


def _conform(value: Any, schema: dict[str, Any], defs: dict[str, Any], where: str) -> Any:
    if "$ref" in schema:
        return _conform(value, defs[schema["$ref"].rsplit("/", 1)[-1]], defs, where)
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            raise Unparsed(f"{where} is not an object")
        missing = [name for name in schema.get("required", ()) if name not in value]
        if missing:
            raise Unparsed(f"{where} lacks {', '.join(missing)}")
        fields = schema.get("properties", {})
        return {name: _conform(value[name], fields[name], defs, f"{where}.{name}") for name in fields if name in value}
    if kind == "array":
        if not isinstance(value, list):
            raise Unparsed(f"{where} is not a list")
        return [_conform(item, schema.get("items", {}), defs, f"{where}[{i}]") for i, item in enumerate(value)]
    if kind == "string":
        if not isinstance(value, str):
            raise Unparsed(f"{where} is not a string")
        return value
    if kind == "integer":
        return _integer(value, where)
    return value


def _integer(value: Any, where: str) -> int:
    """pydantic's lax int: a bool, an int, a float without fraction, or a string of digits."""
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER_TEXT.fullmatch(value):
        return int(value)
    raise Unparsed(f"{where} is not an integer")

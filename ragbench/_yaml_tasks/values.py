"""How the raw values of a record read: a list written as text (a CSV value), and what kind a value is,
as messages name it."""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from typing import Any


def listed_text(text: str) -> list[Any] | None:
    """The list a text writes as JSON (`["a", "b"]`) or as Python's repr (`['a', 'b']`), else None."""
    text = text.strip()
    if not (text.startswith("[") and text.endswith("]")):
        return None
    for parse in (json.loads, ast.literal_eval):
        try:
            items = parse(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        return items if isinstance(items, list) else None
    return None


# what a message calls a value of each type (a type not named here: its class name)
KINDS: dict[type, str] = {
    dict: "a mapping",
    list: "a list",
    str: "a string",
    bool: "true/false",
    int: "an integer",
    float: "a number",
}
RECORD_KINDS: dict[type, str] = {**KINDS, type(None): "null"}  # a record's None is JSON's null


def kind(value: Any, kinds: Mapping[type, str] = RECORD_KINDS) -> str:
    return kinds.get(type(value), type(value).__name__)

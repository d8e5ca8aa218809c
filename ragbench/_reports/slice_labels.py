"""The label of a record's value of a slice field, shared by results.json, report.md, its plots,
`ragbench compare` and the viewer so that they all group examples alike.

A value is labelled by its text, but values that are not equal never share a slice: a record
without a value (the field absent or null) is `(none)`, never the string "None"; and where one
field's values of different kinds have the same text (the number 1 and the string "1", True and
"True", no value and the string "(none)"), each one that is not a string carries its kind:
`1 [number]` beside `1`, `(none) [no value]` beside `(none)`. A string is always shown as it is.
"""
from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Iterable

NO_VALUE = "(none)"

SliceValue = tuple[str, str]  # (kind, text)
NONE: SliceValue = ("no value", NO_VALUE)  # a record without a value of the field


def slice_value(meta: dict[str, Any] | None, field: str) -> SliceValue:
    """(kind, text) of `meta[field]`: kind is string, number, boolean, no value (absent or null), or
    list / object (their JSON text)."""
    value = (meta or {}).get(field)
    if value is None:
        return NONE
    if isinstance(value, str):
        return "string", value
    if isinstance(value, bool):
        return "boolean", str(value)
    if isinstance(value, (int, float)):
        return "number", str(value)
    kind = "object" if isinstance(value, dict) else "list" if isinstance(value, (list, tuple)) else type(value).__name__
    return kind, json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


class SliceLabels:
    """Labels of one field's values, each value's text unless values of several kinds share it."""

    def __init__(self, values: Iterable[SliceValue]) -> None:
        self._kinds: dict[str, set[str]] = defaultdict(set)
        for kind, text in values:
            self._kinds[text].add(kind)

    def label(self, value: SliceValue) -> str:
        kind, text = value
        return text if kind == "string" or len(self._kinds.get(text, ())) <= 1 else f"{text} [{kind}]"

    def labels(self) -> list[str]:
        """Every value's label, sorted."""
        return sorted({self.label((kind, text)) for text, kinds in self._kinds.items() for kind in kinds})


def field_labels(metas: Iterable[dict[str, Any] | None], field: str) -> SliceLabels:
    """The labels of `field` over records' `meta`s."""
    return SliceLabels(slice_value(meta, field) for meta in metas)

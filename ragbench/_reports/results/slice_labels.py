"""The label of a record's value of a slice field, shared by results.json, report.md, its plots,
`ragbench compare` and the viewer so that they all group examples alike.

A value is labelled by its text, but values that are not equal never share a slice: a record
without a value (the field absent or null) is `(none)`, never the string "None"; and where one
field's values of different kinds have the same text (the number 1 and the string "1", True and
"True", no value and the string "(none)"), each one that is not a string carries its kind:
`1 [number]` beside `1`, `(none) [no value]` beside `(none)`. A string is always shown as it is.

Labels are listed in `label_order`: numbers in a label compare as numbers (2 before 10, -1 before
0.5, `hop_2` before `hop_10`), and `(none)` comes last.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping

NO_VALUE = "(none)"

SliceValue = tuple[str, str]  # (kind, text)
NUMBER = re.compile(r"((?:^-)?\d+(?:\.\d+)?)")  # a minus sign only where the label starts: 2024-01-15 is a date
NONE: SliceValue = ("no value", NO_VALUE)  # a record without a value of the field


def slice_value(meta: Mapping[str, object] | None, field: str) -> SliceValue:
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
        """Every value's label, in `label_order`."""
        return ordered({self.label((kind, text)) for text, kinds in self._kinds.items() for kind in kinds})


def label_order(label: str) -> tuple[bool, list[str | float], str]:
    """Sort key of a label: no value last, then text and numbers alternating (re.split with a group puts
    text at even places and numbers at odd ones, so like compares with like), then the label itself."""
    parts: list[str | float] = [float(part) if i % 2 else part for i, part in enumerate(NUMBER.split(label))]
    return label.startswith(NO_VALUE), parts, label


def ordered(labels: Iterable[str]) -> list[str]:
    return sorted(labels, key=label_order)


def field_labels(metas: Iterable[Mapping[str, object] | None], field: str) -> SliceLabels:
    """The labels of `field` over records' `meta`s."""
    return SliceLabels(slice_value(meta, field) for meta in metas)

"""A long JSON list written a slice at a time (`write_json_list`): json's encoder makes a string of every item and a
list of them all before it joins them, ~90 bytes an item of a vocabulary held at once (a shard build's last step
writes the whole corpus's vocabulary, `terms.json`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SLICE = 1 << 16  # items encoded at a time


def write_json_list(path: Path, items: Sequence[Any]) -> None:
    """`path` holds `json.dumps(list(items), ensure_ascii=False)`, UTF-8, byte for byte."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("[")
        for start in range(0, len(items), SLICE):
            piece = json.dumps(list(items[start : start + SLICE]), ensure_ascii=False)[1:-1]
            handle.write(f", {piece}" if start else piece)
        handle.write("]")

"""An ended batch's result lines, as the vendor sent them, read so that a damaged line costs only itself
(batches/runner.py): each line that is a JSON object with a string `custom_id` is that request's; a custom id on
more than one line is neither line's (no line is picked over another); any other line (not UTF-8, not JSON, not an
object, no custom id, nested past reading) is unreadable, answers nothing, and is named. A request no line is taken
for is the vendor's failure: sent again."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..._values.json_values import JsonObject

NOT_UTF8 = "not UTF-8: "  # the start of a line kept in place of one that was not UTF-8 (no JSON starts so)


def text_lines(data: bytes) -> list[str]:
    """The lines of a JSONL file the vendor sent (blank ones dropped); one not UTF-8 is kept, unreadable, as
    `NOT_UTF8` and its bytes escaped."""
    out = []
    for raw in data.split(b"\n"):
        if raw.strip():
            try:
                out.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                out.append(NOT_UTF8 + raw.decode("utf-8", "backslashreplace"))
    return out


@dataclass(frozen=True)
class ResultLines:
    """The line of each custom id found on exactly one line; the ids found on more (with how many) and those lines,
    taken for none but billed all the same (the run's cost counts them); why each unreadable line is (`line N:
    ...`), and how many lines there were."""

    lines: dict[str, JsonObject]
    repeated: dict[str, int]
    unreadable: list[str]
    count: int
    repeated_lines: dict[str, list[JsonObject]]

    @property
    def ids(self) -> set[str]:
        """Every custom id a line carries."""
        return set(self.lines) | set(self.repeated)


def read_result_lines(texts: Iterable[str]) -> ResultLines:
    """Read `texts`, a batch's result lines (blank ones skipped), never raising on what they hold."""
    read: list[tuple[str, JsonObject]] = []
    unreadable: list[str] = []
    count = 0
    for number, text in enumerate((text for text in texts if text.strip()), 1):
        count = number
        try:
            line = json.loads(text)
        except (ValueError, RecursionError) as exc:  # (a JSONDecodeError is a ValueError)
            unreadable.append(f"line {number}: not JSON ({type(exc).__name__}: {str(exc)[:80]})")
            continue
        if not isinstance(line, dict):
            unreadable.append(f"line {number}: a JSON {type(line).__name__}, not an object")
        elif not isinstance(line.get("custom_id"), str):
            unreadable.append(f"line {number}: no custom_id")
        else:
            read.append((line["custom_id"], line))
    times = Counter(custom for custom, _ in read)
    repeated = {custom: n for custom, n in times.items() if n > 1}
    lines = {custom: line for custom, line in read if custom not in repeated}
    repeated_lines: dict[str, list[JsonObject]] = {}
    for custom, line in read:
        if custom in repeated:
            repeated_lines.setdefault(custom, []).append(line)
    return ResultLines(lines, repeated, unreadable, count, repeated_lines)

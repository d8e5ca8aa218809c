"""Reading JSONL files record by record: a bad line becomes a `RecordError`, never a crash."""
from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any, Iterator

from .errors import RecordError


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any] | RecordError]]:
    """Yield (0-based line index, record or error) for every non-blank line."""
    with open(path, encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                yield index, RecordError(str(path), index + 1, f"not valid JSON ({exc.msg} at column {exc.colno})")
                continue
            if not isinstance(record, dict):
                yield index, RecordError(str(path), index + 1, f"expected a JSON object, got {type(record).__name__}")
                continue
            yield index, record


def require(record: dict[str, Any], field: str, path: str | Path, line_index: int,
            types: type | tuple[type, ...] = object) -> Any:
    """The value of a required field, or a `RecordError` naming file, line and field."""
    if field not in record:
        raise RecordError(str(path), line_index + 1, "missing field", field)
    value = record[field]
    if not isinstance(value, types):
        names = types.__name__ if isinstance(types, type) else "/".join(t.__name__ for t in types)
        raise RecordError(str(path), line_index + 1, f"expected {names}, got {type(value).__name__}", field)
    return value


def open_append(path: str | Path) -> IO[str]:
    """Open a JSONL file to append lines to, never gluing a new line onto one that a killed
    process cut short (that line stays alone and unparseable, the new one is whole)."""
    path = Path(path)
    cut_short = False
    if path.is_file() and path.stat().st_size:
        with path.open("rb") as existing:
            existing.seek(-1, 2)
            cut_short = existing.read(1) != b"\n"
    handle = path.open("a", encoding="utf-8")
    if cut_short:
        handle.write("\n")
        handle.flush()
    return handle

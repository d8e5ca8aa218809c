"""Where a YAML task's records come from: local files (JSONL, JSON, CSV; plain, .gz or .bz2), and Parquet
and Hugging Face datasets through `datasets` (ragbench._yaml_tasks.hf). A benchmark's own layouts
(FlashRAG's JSONL, SQuAD's JSON) are formats its folder registers (ragbench._yaml_tasks.formats).

Local JSONL, JSON and CSV are read here, not through `datasets`: a bad line stays one counted bad
record naming file and line (a `datasets` load fails whole on it), and a run's start-up does not pay
for `import datasets` and its Arrow cache (a small JSONL file is read here in a fraction of the time
`load_dataset("json")` takes: docs/performance.md, "Figures behind the code").

Every reader yields (RecordPlace, record or RecordError): where the record is, as messages name it (the
file line of JSON Lines and CSV, the path in a JSON document), and its position in the data."""

from __future__ import annotations

import codecs
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .._storage.given_files import decoded
from .._storage.jsonl import NestedTooDeep, guarded, objects, parse_json, read_lines
from .csv_rows import csv_records
from .fields import MISSING, lookup
from .opened import compression, open_binary, open_plain
from .places import RecordPlace

Item = tuple[RecordPlace, Any]
SUFFIX_FORMATS = {".jsonl": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "csv", ".parquet": "parquet"}
FILE_FORMATS = ("jsonl", "json", "csv", "parquet")


def file_format(path: Path, declared: str, task: str) -> str:
    """The format of a local file or folder: the declared one (the core's, or a registered one), or (auto)
    from the name."""
    if declared not in ("auto", "hf") and path.is_file():
        return declared
    if path.is_dir():
        return "hf"
    inner = Path(path.stem) if compression(path) else path
    found = SUFFIX_FORMATS.get(inner.suffix.lower())
    if found is None:
        raise ConfigError(
            f"task {task}: cannot tell the format of {path} from its name; give data.format "
            f"({', '.join(FILE_FORMATS)}, or one a benchmark registers) or a file named .jsonl, .json, .csv, .tsv or .parquet "
            "(optionally .gz or .bz2)"
        )
    return found


class JsonError(ConfigError):
    """A file that is not one JSON document; `reason` is json's message ("Extra data": JSON Lines)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class KeyedObject(dict[str, Any]):
    """A JSON object that remembers the keys it holds more than once (JSON keeps each one's last value). Only
    keyed documents are parsed into them: parsing into them is several times slower than into plain dicts."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        counts = Counter(key for key, _ in pairs) if len(self) < len(pairs) else Counter()
        self.repeated = {key for key, n in counts.items() if n > 1}


def read_document(path: Path, expected: str, keep_repeated_keys: bool = False) -> Any:
    """A whole JSON document (decompressed); unreadable or not JSON: a ConfigError naming line and column.
    `keep_repeated_keys`: its objects are KeyedObjects."""
    try:
        with open_binary(path) as handle:
            raw = handle.read()
    except (OSError, EOFError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc}); expected {expected}") from exc
    # a byte order mark (Windows tools) is no part of the JSON
    text = decoded(raw.removeprefix(codecs.BOM_UTF8), str(path), f"expected {expected}")
    try:
        if keep_repeated_keys:
            return guarded(lambda document: json.loads(document, object_pairs_hook=KeyedObject))(text)
        return parse_json(text)
    except json.JSONDecodeError as exc:
        raise JsonError(
            f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); expected {expected}", exc.msg
        ) from exc
    except NestedTooDeep as exc:
        raise ConfigError(f"{path}: {exc}; expected {expected}") from exc


def jsonl_records(path: Path) -> Iterator[Item]:
    """Records by their line (blank lines counted, as the position: a record without an id is named by it)."""
    with open_binary(path) as handle:
        for index, record in objects(read_lines(handle, str(path)), str(path)):
            yield RecordPlace(str(path), index, index + 1), record


def json_records(path: Path, records: str | None, keys_as: str | None = None) -> Iterator[Item]:
    """The records of a JSON document (a list, or the list at `records`); a file of JSON Lines is read as such.
    With `keys_as`, the value at `records` is a mapping of key -> record (MIRAGE's benchmark.json, one set's
    `{id: {question, options, answer}}`), read in the document's order, each record given its key as the
    field `keys_as`."""
    expected = ("a JSON mapping of key -> record" if keys_as else "a JSON list of records") + (
        f" at '{records}'" if records else ""
    )
    try:
        data = read_document(path, expected, keep_repeated_keys=bool(keys_as))
    except JsonError as exc:
        if exc.reason == "Extra data" and records is None and keys_as is None:  # JSON Lines named .json
            yield from jsonl_records(path)
            return
        raise
    found = lookup(data, records) if records else data
    if not isinstance(found, dict if keys_as else list):
        what = "nothing" if found is MISSING else type(found).__name__
        hint = (
            "; name the list with data.records (e.g. records: data)"
            if not records
            else "; a mapping of key -> record is read with data.keys_as (e.g. keys_as: id)"
            if isinstance(found, dict) and not keys_as
            else ""
        )
        raise ConfigError(f"{path}: expected {expected}, found {what}{hint}")
    if keys_as and isinstance(found, dict):  # a mapping, as just checked
        yield from keyed_records(path, records, found, keys_as)
        return
    for position, record in enumerate(found):
        place = RecordPlace(str(path), position, position + 1, f"{records or ''}[{position}]")
        yield (
            place,
            record
            if isinstance(record, dict)
            else place.error(f"expected a record (a JSON object), got {type(record).__name__}"),
        )


def keyed_records(path: Path, records: str | None, found: dict[str, Any], keys_as: str) -> Iterator[Item]:
    """The records of a mapping of key -> record, each with its key as the field `keys_as` (a record that
    has that field already is a bad record: its key would replace it; so is a key the mapping repeats, of
    which JSON keeps the last record only)."""
    repeated: set[str] = getattr(found, "repeated", set())
    for position, (key, record) in enumerate(found.items()):
        place = RecordPlace(str(path), position, position + 1, f"{records + '.' if records else ''}{key}")
        if key in repeated:
            yield (
                place,
                place.error(
                    f"the mapping holds key {key!r} more than once, and JSON keeps only its last "
                    "record: give each record its own key",
                    keys_as,
                ),
            )
        elif not isinstance(record, dict):
            yield place, place.error(f"expected a record (a JSON object), got {type(record).__name__}")
        elif keys_as in record:
            yield (
                place,
                place.error(
                    f"the record has a field '{keys_as}' of its own, which data.keys_as would "
                    f"replace with its key; give keys_as another name",
                    keys_as,
                ),
            )
        else:
            yield place, {keys_as: key, **record}


def file_records(
    path: Path,
    fmt: str,
    records: str | None = None,
    delimiter: str | None = None,
    keys_as: str | None = None,
    header_row: int | None = None,
) -> Iterator[Item]:
    """The records of a local file in one of the core's text formats (jsonl, json, csv)."""
    if fmt == "jsonl":
        return jsonl_records(path)
    if fmt == "json":
        return json_records(path, records, keys_as)
    return csv_records(path, delimiter, header_row)


def count_lines(path: Path) -> int | None:
    """Records of a plain JSONL file (non-blank lines), cheap enough for the progress bar's ETA."""
    if compression(path):
        return None
    with open_plain(path) as handle:
        return sum(1 for line in handle if line.strip())

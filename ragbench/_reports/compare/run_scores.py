"""A task's per-example scores as `ragbench compare` and the viewer's Compare page pair them: read from a run's
samples file one line at a time and kept as columns by example id, never as records.

Per example scored (an id and no error) the columns keep a row: each per-example key's value (float64, NaN where
it has none), the code of each slice field's value (uint32; the distinct values once) and a 16-byte digest of the
example's data (`example_sha256`: BLAKE2b of its text, so that equal digests compare equal). That is about 40 bytes
an example beside its id, where records of Python objects took kilobytes. An id read again takes its row over, as
a dict of records by id did: the row keeps its place, the later line's values. Slice labels are made from every
line but bad records (results.json's slices), scored or not.
"""

from __future__ import annotations

import hashlib
import json
import math
from array import array
from collections.abc import Iterable, KeysView, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from ..._errors import RecordError
from ..._storage.jsonl import LocatedLine
from ..._storage.run_shapes import plainly_current
from ..._storage.sample_files import sample_at, sample_lines
from ..._storage.shared_turns import TurnsReader
from ..._values.json_values import JsonObject, JsonValue, json_object
from ..results.slice_labels import SliceLabels, SliceValue, slice_value

DIGEST_BYTES = 16
BEYOND_64_BITS = 2.0**63  # orjson reads an integer beyond 64 bits as a float of at least this size


def parse_sample_line(text: str) -> Any:
    """A samples file's line parsed as json.loads parses it, as far as `TaskScores` and the line's checks read
    it: by orjson (over twice as fast), unless orjson refuses it (NaN or Infinity, a lone surrogate, a number
    beyond the floats, deep nesting, no JSON: json.loads's value or error then) or a value read here is a float
    of 2**63 or more, which may be an integer orjson read as a float (then json.loads again)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
    if isinstance(value, dict) and _large_float(value):
        return json.loads(text)
    return value


def _large_float(line: JsonObject) -> bool:
    """Whether a value `TaskScores` reads of the line (its id, index, version, scores, slice values) is a float of
    2**63 or more (or NaN), or holds one."""
    values = [line.get("id"), line.get("index"), line.get("schema_version")]
    for part in (line.get("scores"), line.get("meta")):
        if isinstance(part, dict):
            values.extend(part.values())
        else:
            values.append(part)
    for value in values:  # flat first: a nested value is rare
        if isinstance(value, float):
            if not abs(value) < BEYOND_64_BITS:
                return True
        elif isinstance(value, (list, dict)) and _holds_large_float(value):
            return True
    return False


def _holds_large_float(value: Any) -> bool:
    if isinstance(value, float):
        return not abs(value) < BEYOND_64_BITS
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(_holds_large_float(item) for item in items)


def read_task_scores(path: Path, keys: Iterable[str], fields: Iterable[str]) -> tuple[TaskScores, list[RecordError]]:
    """A samples file's scored examples (`TaskScores`) and its unreadable lines' RecordErrors, read a block at a
    time: each line that `TaskScores.add_text` does not take is read as `located_samples` reads it."""
    scores, errors, where, turns = TaskScores(keys, fields), [], str(path), TurnsReader()
    for item in sample_lines(path, parse_sample_line):
        if isinstance(item, LocatedLine):
            value = item.value
        elif scores.add_text(item[2]):
            continue
        else:
            value = sample_at(where, *item, parse_sample_line, turns)
        if isinstance(value, RecordError):
            errors.append(value)
        else:
            scores.add(value)
    return scores, errors


def _too_large(value: Any) -> bool:
    """A float of 2**63 or more: maybe an integer beyond 64 bits that orjson read as a float."""
    return type(value) is float and not abs(value) < BEYOND_64_BITS


def score_value(value: Any) -> float | None:
    """A saved score as a float; None where it is not scorable, or not a finite number (an older sample's)."""
    if not isinstance(value, (int, float)) or (isinstance(value, int) and abs(value) >= 2**1023):
        return None
    return float(value) if math.isfinite(value) else None


class SliceCodes:
    """One slice field: the code of each row's value, each distinct value once, and the values of lines that
    are no bad record (those its labels are made of)."""

    def __init__(self, field: str) -> None:
        self.field = field
        self.codes = array("I")
        self.distinct: dict[SliceValue, int] = {}
        self.listed: set[SliceValue] = set()

    def code(self, meta: Mapping[str, JsonValue], bad_record: bool) -> int:
        value = slice_value(meta, self.field)
        if not bad_record:
            self.listed.add(value)
        return self.distinct.setdefault(value, len(self.distinct))

    def labels(self) -> SliceLabels:
        return SliceLabels(self.listed)


class TaskScores:
    """The scored examples of one task of one run, as columns (see the module's docstring)."""

    def __init__(self, keys: Iterable[str], fields: Iterable[str]) -> None:
        self.rows: dict[str, int] = {}  # example id -> row
        self._values = {key: array("d") for key in keys}
        self._odd: set[str] = set()  # keys with a saved value that is a number no float holds, or no number at all
        self._slices = {field: SliceCodes(field) for field in fields}
        self._digests = bytearray()
        self._has_digest = bytearray()

    @classmethod
    def of(cls, records: Mapping[str, JsonObject], keys: Iterable[str], fields: Iterable[str]) -> TaskScores:
        """From records by example id (each with `scores`, `meta` and `example_sha256`)."""
        scores = cls(keys, fields)
        for example_id, record in records.items():
            scores.add({**record, "id": example_id})
        return scores

    def add(self, line: Mapping[str, JsonValue]) -> None:
        """A sample line (checked, in the current shape): a row where it scored an example, its slice values
        counted for the labels where it is no bad record."""
        meta, bad_record = json_object(line.get("meta")), bool(line.get("bad_record"))
        codes = [column.code(meta, bad_record) for column in self._slices.values()]
        if line.get("id") is None or line.get("error") is not None:
            return
        scores, sha256 = json_object(line.get("scores")), line.get("example_sha256")
        values = [self._value(key, scores.get(key)) for key in self._values]
        digest = (
            None
            if sha256 is None
            else hashlib.blake2b(str(sha256).encode("utf-8", "surrogatepass"), digest_size=DIGEST_BYTES).digest()
        )
        row = self.rows.setdefault(str(line["id"]), len(self.rows))
        if row == len(self._has_digest):  # a new example
            for column, value in zip(self._values.values(), values):
                column.append(value)
            for slice_column, code in zip(self._slices.values(), codes):
                slice_column.codes.append(code)
            self._has_digest.append(digest is not None)
            self._digests += digest or bytes(DIGEST_BYTES)
        else:  # an id read again: its later line counts
            for column, value in zip(self._values.values(), values):
                column[row] = value
            for slice_column, code in zip(self._slices.values(), codes):
                slice_column.codes[row] = code
            self._has_digest[row] = digest is not None
            self._digests[row * DIGEST_BYTES : (row + 1) * DIGEST_BYTES] = digest or bytes(DIGEST_BYTES)

    def add_text(self, text: bytes) -> bool:
        """A sample line's bytes added as `add` adds its record, where it is plainly a sample of the current shape
        that orjson reads as json.loads does (no float of 2**63 or more, no nested slice value, where compare
        reads); False (nothing added) where the line needs `sample_at`'s full reading."""
        if text[:1] != b"{":
            return False
        try:
            line = orjson.loads(text)
        except orjson.JSONDecodeError:
            return False
        if not plainly_current(line) or _too_large(line.get("id")):
            return False
        scores, meta = line.get("scores") or {}, line.get("meta") or {}
        if any(_too_large(scores.get(key)) for key in self._values) or any(
            _too_large(meta.get(field)) or type(meta.get(field)) in (list, dict) for field in self._slices
        ):
            return False
        self.add(line)
        return True

    def _value(self, key: str, saved: Any) -> float:
        if type(saved) is float and saved - saved == 0:  # finite: most values
            return saved
        value = score_value(saved)
        if value is None:
            if saved is not None:
                self._odd.add(key)
            return math.nan
        return value

    def __len__(self) -> int:
        return len(self.rows)

    def ids(self) -> KeysView[str]:
        return self.rows.keys()

    def places(self, ids: list[str]) -> np.ndarray:
        """The rows of `ids` (each scored here), in their order."""
        return np.fromiter(map(self.rows.__getitem__, ids), dtype=np.int64, count=len(ids))

    def values(self, key: str) -> np.ndarray:
        """The key's value of every row (NaN: none; a key the task does not have: none anywhere)."""
        column = self._values.get(key)
        return np.frombuffer(column, dtype=np.float64) if column else np.full(len(self), np.nan)

    def has_odd(self, key: str) -> bool:
        """Whether a saved value of the key is a number no float holds, or no number at all (kept as none)."""
        return key in self._odd

    def digests(self) -> tuple[np.ndarray, np.ndarray]:
        """(each row's digest of its example's data, whether the row has one: a sample of an older ragbench has none)."""
        return (
            np.frombuffer(bytes(self._digests), dtype=f"S{DIGEST_BYTES}"),
            np.frombuffer(bytes(self._has_digest), dtype=bool),
        )

    def slice_labels(self) -> dict[str, SliceLabels]:
        return {field: column.labels() for field, column in self._slices.items()}

    def slice_codes(self, field: str) -> tuple[np.ndarray, list[SliceValue]]:
        """(the code of each row's value of the field, the value of each code)."""
        column = self._slices[field]
        return np.frombuffer(column.codes, dtype=np.uint32), list(column.distinct)

    def slice_groups(self, field: str, labels: SliceLabels, rows: np.ndarray) -> dict[str, np.ndarray]:
        """`field=label` -> the positions in `rows` of the rows of that label (in the order of `rows`): every label
        of `labels` in their order, empty or not, then any other label the rows' values have (`labels` made
        elsewhere), in the order the rows first have it."""
        codes, values = self.slice_codes(field)
        code_labels = [labels.label(value) for value in values]
        names = labels.labels()
        row_codes = codes[rows]
        present, first = np.unique(row_codes, return_index=True)
        for code in present[np.argsort(first)]:
            if code_labels[code] not in names:
                names.append(code_labels[code])
        number = {name: i for i, name in enumerate(names)}
        row_labels = np.array([number.get(label, -1) for label in code_labels], dtype=np.int64)[row_codes]
        order = np.argsort(row_labels, kind="stable")  # grouped by label, each group in the order of `rows`
        ends = np.searchsorted(row_labels[order], np.arange(len(names) + 1))
        return {f"{field}={name}": order[ends[i] : ends[i + 1]] for i, name in enumerate(names)}

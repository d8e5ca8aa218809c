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
import math
from array import array
from collections.abc import Iterable, KeysView
from typing import Any

import numpy as np

from .slice_labels import SliceLabels, SliceValue, slice_value

DIGEST_BYTES = 16


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

    def code(self, meta: dict[str, Any] | None, bad_record: bool) -> int:
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
    def of(cls, records: dict[str, dict[str, Any]], keys: Iterable[str], fields: Iterable[str]) -> TaskScores:
        """From records by example id (each with `scores`, `meta` and `example_sha256`)."""
        scores = cls(keys, fields)
        for example_id, record in records.items():
            scores.add({**record, "id": example_id})
        return scores

    def add(self, line: dict[str, Any]) -> None:
        """A sample line (checked, in the current shape): a row where it scored an example, its slice values
        counted for the labels where it is no bad record."""
        bad_record = bool(line.get("bad_record"))
        meta = line.get("meta") or {}
        codes = {field: column.code(meta, bad_record) for field, column in self._slices.items()}
        if line.get("id") is None or line.get("error") is not None:
            return
        example_id, scores, digest = str(line["id"]), line.get("scores") or {}, line.get("example_sha256")
        row = self.rows.setdefault(example_id, len(self.rows))
        if row == len(self._has_digest):
            self._grow()
        for key, column in self._values.items():
            saved = scores.get(key)
            value = score_value(saved)
            if value is None and saved is not None:
                self._odd.add(key)
            column[row] = math.nan if value is None else value
        for field, code in codes.items():
            self._slices[field].codes[row] = code
        self._has_digest[row] = digest is not None
        if digest is not None:
            text = str(digest).encode("utf-8", "surrogatepass")
            self._digests[row * DIGEST_BYTES : (row + 1) * DIGEST_BYTES] = hashlib.blake2b(
                text, digest_size=DIGEST_BYTES
            ).digest()

    def _grow(self) -> None:
        for column in self._values.values():
            column.append(math.nan)
        for slice_codes in self._slices.values():
            slice_codes.codes.append(0)
        self._has_digest.append(0)
        self._digests += bytes(DIGEST_BYTES)

    def __len__(self) -> int:
        return len(self.rows)

    def ids(self) -> KeysView[str]:
        return self.rows.keys()

    def places(self, ids: list[str]) -> np.ndarray:
        """The rows of `ids` (each scored here), in their order."""
        rows = self.rows
        return np.fromiter((rows[i] for i in ids), dtype=np.int64, count=len(ids))

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
        """"field=label" -> the positions in `rows` of the rows of that label (in the order of `rows`): every label
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

"""A run's checkpoint bookkeeping: what identifies a record (`checkpoint_key`), what it was made from (its
digest, `record_digest`), where it stands in the data (its position), and the digest of the examples a
task's numbers come from (`data_sha256`).

A --resume reads the data again, record by record (`TaskCheckpoint.needs_run`): a record whose key has no
saved sample, whose sample failed, or whose digest changed since it was saved runs again; one unchanged keeps
its sample, which takes the record's position now when the samples are rewritten in data order; a saved
sample whose key the data no longer holds is dropped. So a reordered, edited, added or removed record ends
as a fresh run of the file would, and `data_sha256` (each record's place and digest) describes that file.

Digests are fed value by value rather than as one `json.dumps`: a CRAG Task 3 example holds 50 web pages
(megabytes of HTML), and dumping it to JSON first held the event loop several times as long as hashing its
strings as they are. A read-only record's digest is made once (`record_digest` keeps it while the record lives): an
example's is read by the system that records its answer (ragbench._apps.application) and by its sample.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from functools import cache
from typing import Any

from .._read_only import kept
from .._values.conversation import History
from .._values.images import Image


def checkpoint_key(example_id: Any, index: int | None) -> str:
    """A record's checkpoint key: "id " and its example id, or for a bad record (no id) "bad record " and its
    position; no id, whatever its text, takes a bad record's key."""
    return f"bad record {index}" if example_id is None else f"id {example_id}"


# Fields added after digests were first recorded, fed only where they hold something: an example without images (a
# document without one) keeps the digest it had, so a --resume over an older ragbench's samples runs none again.
_FED_WHEN_SET = ("images", "image")


def record_digest(example: Any) -> str:
    """sha256 of everything an example (a dataclass) holds but its position in the data (`index`); an image by
    its content's digest, never where it was read from. A read-only record (`ReadOnly.read_only`: nothing in it
    can change) is digested once and keeps its digest (`kept`): the application system and the sample read the
    same record."""
    return kept(example, "record_digest", lambda: _digested(example))


def _digested(example: Any) -> str:
    parts: list[bytes] = []
    _feed(parts, {name: value for name, value in _fields(example).items() if name != "index"})
    digest = hashlib.sha256()
    digest.update(b"".join(parts))  # as fed part by part: sha256 reads one stream
    return digest.hexdigest()


def _fields(value: Any) -> dict[str, object]:
    kind: type = type(value)
    return {
        name: getattr(value, name)
        for name in _field_names(kind)
        if not (name in _FED_WHEN_SET and not getattr(value, name))
    }


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names in order, read once a class (`dataclasses.fields` walks its fields each call)."""
    return tuple(spec.name for spec in fields(cls))


_LITERALS = {None: b"s4:null", True: b"s4:true", False: b"s5:false"}  # json.dumps's text, as `_feed` tags it


def _feed(parts: list[bytes], value: Any) -> None:
    """`value` into `parts` (the bytes digested, in order), each kind tagged and each string length-prefixed (no two
    values feed alike)."""
    kind = type(value)
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        parts.append(b"s%d:" % len(data))
        parts.append(data)
    elif kind is int or value is None or kind is bool:  # json.dumps's text of them, made with no call of it
        parts.append(b"j")
        parts.append(_LITERALS[value] if kind is not int else b"s%d:%d" % (len(str(value)), value))
    elif isinstance(value, dict):
        parts.append(b"d%d:" % len(value))
        for key in sorted(value, key=str):
            _feed(parts, str(key))
            _feed(parts, value[key])
    elif isinstance(value, (list, tuple, History)):  # a History as the list of its turns
        parts.append(b"l%d:" % len(value))
        for item in value:
            _feed(parts, item)
    elif isinstance(value, Image):
        parts.append(b"i")
        _feed(parts, value.digest)
    elif is_dataclass(value) and not isinstance(value, type):
        parts.append(b"o")
        _feed(parts, _fields(value))
    else:  # numbers, booleans, None; anything else by its text
        parts.append(b"j")
        _feed(parts, json.dumps(value, default=str))


def data_sha256(samples: list[dict[str, Any]]) -> str:
    """One digest of the examples a task's numbers come from: each record's place and `example_sha256`
    in data order (a bad record: its place). Two runs with equal digests scored the same examples, however
    their data was found (a file, a folder, a hub dataset, a download), as lm-evaluation-harness's
    `task_hashes` tell; the samples need not be shared to see it."""
    digest = DataDigest()
    for sample in sorted(samples, key=lambda s: s.get("index", -1)):
        digest.add(sample.get("index"), sample.get("example_sha256"))
    return digest.hexdigest()


class DataDigest:
    """`data_sha256` of records given one at a time, in data order (a run's samples as rewritten)."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()

    def add(self, index: int | None, example_sha256: str | None) -> None:
        """A record at its place `index`, made from the example of `example_sha256` (None: a bad record)."""
        self._digest.update(f"{index}:{example_sha256 or 'bad record'}\n".encode())

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


class TaskCheckpoint:
    """One task's records as a run reads them, against the samples saved before it began (`saved`: key ->
    what each was made from, ragbench._run.modes.planned_run.finished_keys; empty for a new run)."""

    def __init__(self, saved: dict[str, str | None]) -> None:
        self.saved = saved
        self.read: dict[str, str | None] = {}  # what a record with a saved sample is made from now
        self.positions: dict[str, int] = {}  # every key read, at its position in the data now
        self._ids: set[str] = set()

    @property
    def records(self) -> int:
        """Records read so far (the run must end with as many)."""
        return len(self.positions)

    def repeats(self, example_id: Any) -> bool:
        """Whether an earlier record read had this example id (ids are a task's checkpoint keys)."""
        text = str(example_id)
        repeated = text in self._ids
        self._ids.add(text)
        return repeated

    def needs_run(self, key: str, position: int, made_from: Callable[[], str]) -> bool:
        """Whether the record at `position` must run: it has no saved sample that needs no new attempt, or
        what it is made from (`made_from()`, read only where a sample is saved) changed since. A sample of an
        older ragbench, which recorded no digest (None), is kept."""
        self.positions[key] = position
        if key not in self.saved:
            return True
        self.read[key] = None if self.saved[key] is None else made_from()
        return self.read[key] != self.saved[key]

    def kept(self, finished: dict[str, str | None]) -> int:
        """Of `finished` (the samples now that need no new attempt), those that stand: saved during this
        attempt, or saved before and read again unchanged."""
        return sum(
            1
            for key, made in finished.items()
            if key not in self.saved or (key in self.read and self.read[key] == made)
        )

"""The structure of an index's files, checked before anything searches them: a file that cannot be read, an array
of the wrong shape or type, a number out of its range or out of order is an `IndexDamage` naming the file, never a
traceback or a silent search of damaged arrays in the middle of a run.

Arrays are scanned `BLOCK` elements at a time (numpy over a memory map): memory stays bounded whatever their size,
and the cost is one read of each array.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..._errors import shown_value

BLOCK = 1 << 22  # elements of an array looked at at once
INTEGERS, FLOATS = "iu", "f"  # numpy dtype kinds (bool is neither)
ARRAY_KINDS = {INTEGERS: "integers", FLOATS: "floats"}


class IndexDamage(Exception):
    """A file of an index that is not what a build writes: `file` (its name in the index folder) and what is
    wrong with it. The retriever that reads the index says which index it is and how to build it again."""

    def __init__(self, file: str, problem: str) -> None:
        self.file, self.problem = file, problem
        super().__init__(f"{file}: {problem}")


def whole_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def read_array(folder: Path, name: str, mmap: bool = True) -> np.ndarray:
    """The .npy file `name` of `folder` (memory-mapped with `mmap`); missing, cut short or not a .npy file (a
    pickled object array is none) is an IndexDamage."""
    try:
        array: np.ndarray = np.load(folder / name, mmap_mode="r" if mmap else None, allow_pickle=False)
        return array
    except FileNotFoundError:
        raise IndexDamage(name, "missing") from None
    except (OSError, ValueError, EOFError) as exc:
        problem = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        raise IndexDamage(name, f"not a readable .npy array ({problem})") from None


def read_json_object(folder: Path, name: str) -> dict[str, Any]:
    """The JSON object in the file `name` of `folder`; missing, not JSON or another JSON type is an IndexDamage."""
    try:
        value = json.loads((folder / name).read_bytes())
    except FileNotFoundError:
        raise IndexDamage(name, "missing") from None
    except OSError as exc:
        raise IndexDamage(name, f"cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:  # not JSON, or not UTF-8
        raise IndexDamage(name, f"not JSON ({exc})") from None
    except RecursionError:
        raise IndexDamage(name, "JSON nested too deep to read, not what a build writes") from None
    if not isinstance(value, dict):
        raise IndexDamage(name, f"holds a JSON {json_type(value)}, not an object")
    return value


def json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def vector(name: str, array: np.ndarray, kind: str, length: int | None = None) -> np.ndarray:
    """`array` when it is 1-D, of `kind` (INTEGERS or FLOATS) and of `length` elements (when given)."""
    if array.ndim != 1 or array.dtype.kind not in kind:
        raise IndexDamage(
            name, f"holds a {array.dtype} array of shape {array.shape}, not a list of {ARRAY_KINDS[kind]}"
        )
    if length is not None and len(array) != length:
        raise IndexDamage(name, f"holds {len(array)} numbers where {length} were written")
    return array


def blocks(array: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(start, elements) of `array`, `BLOCK` at a time (none empty)."""
    for start in range(0, len(array), BLOCK):
        yield start, np.asarray(array[start : start + BLOCK])


def within(name: str, array: np.ndarray, low: int, high: int, what: str, where: str) -> None:
    """Every element of an integer `array` in low..high-1 (`where` says what that range is)."""
    for start, block in blocks(array):
        if len(block) and (int(block.min()) < low or int(block.max()) >= high):
            position = start + int(np.flatnonzero((block < low) | (block >= high))[0])
            raise IndexDamage(
                name, f"{what} {array[position]} at position {position} is outside {low}..{high - 1} ({where})"
            )


def finite(name: str, array: np.ndarray) -> None:
    for start, block in blocks(array):
        bad = np.flatnonzero(~np.isfinite(block))
        if len(bad):
            raise IndexDamage(name, f"holds {block[bad[0]]} at position {start + int(bad[0])}, not a number")


def ascending(
    name: str, array: np.ndarray, what: str, strictly: bool, restarts: np.ndarray | None = None, runs: str = ""
) -> None:
    """Every element of an integer `array` above (`strictly`) or at least the one before it, except at the
    positions `restarts` (sorted) where a new run begins (`runs` says what they are)."""
    falling = np.less_equal if strictly else np.less
    previous: Any = None  # the element before the block
    for start, block in blocks(array):
        falls = np.flatnonzero(falling(block[1:], block[:-1])) + (start + 1)  # compared in the array's own type
        if previous is not None and falling(block[0], previous):
            falls = np.concatenate([[start], falls])
        if restarts is not None and len(restarts) and len(falls):
            at = np.minimum(np.searchsorted(restarts, falls), len(restarts) - 1)
            falls = falls[restarts[at] != falls]
        if len(falls):
            position = int(falls[0])
            order = "above" if strictly else "at least"
            raise IndexDamage(
                name,
                f"{what} {array[position]} at position {position} is not {order} the one before it "
                f"({array[position - 1]}){runs}",
            )
        previous = block[-1]


def typed_fields(
    name: str, record: Mapping[str, object], types: Mapping[str, tuple[type, ...]], required: tuple[str, ...]
) -> None:
    """The `required` fields present, and each field of `types` that is present of one of its types (a bool
    is no number)."""
    for field in required:
        if field not in record:
            raise IndexDamage(name, f"has no {field}")
    for field, allowed in types.items():
        if field not in record:
            continue
        value = record[field]
        if isinstance(value, bool) and bool not in allowed or not isinstance(value, allowed):
            shown = [t for t in allowed if not (t is int and float in allowed)]  # a float's name says it
            expected = " or ".join(TYPE_NAMES.get(t, t.__name__) for t in shown)
            raise IndexDamage(name, f"{field} is {shown_value(json.dumps(value), 80)}, not {expected}")


TYPE_NAMES = {
    int: "a whole number",
    float: "a number",
    str: "a string",
    bool: "true or false",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


def expect_count(name: str, what: str, found: int, expected: int, source: str) -> None:
    """The file `name` holds the `expected` number of `what`, as the file `source` says."""
    if found != expected:
        raise IndexDamage(name, f"holds {found} {what} where {source} says {expected}")

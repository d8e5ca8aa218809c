"""What may be written into a run's files as JSON: the rule the sample writer holds every record to before
it writes it (and what a plugin returns before it is taken: a prediction's extras, a system's statistics),
so that ragbench's own reader never rejects a line its writer wrote, and nothing is written that reads back
as something else.

A JSON value is None, a bool, a str, a float (NaN and the infinities are written as ragbench's readers read
them), an int the reader can read back (at most `sys.get_int_max_str_digits()` digits: Python's int-parsing
limit, 4,300 by default), a list or tuple of JSON values, or a dict whose keys are str (or int, float, bool
or None, which JSON writes as their text) and whose values are JSON values; nested at most MAX_DEPTH
levels, at most MAX_VALUES values in all, and no container inside itself. Anything else (a set, an
object, bytes) would be written as its `str` (or not at all): it is refused, named with where it is."""

from __future__ import annotations

import numbers
import sys
from typing import Any

MAX_DEPTH = 100  # levels of arrays and objects (the reader follows about 1,000; a record adds a few of its own)
MAX_VALUES = 1_000_000  # values in one record: a plugin's runaway structure is refused, not written for minutes
SHOWN_PATH = 6  # of the path to a problem, the levels a message names
SCALARS = (str, float, bool, type(None))
KEYS = (str, int, float, bool, type(None))


class _Walk:
    """One walk over a value: the values seen so far and the containers open on the way down."""

    def __init__(self) -> None:
        self.values = 0
        self.open: set[int] = set()

    def problem(self, value: Any, depth: int) -> tuple[list[str], str] | None:
        """(path below `value`, what is wrong there) of the first problem found, or None."""
        self.values += 1
        if self.values > MAX_VALUES:
            return [], f"holds more than {MAX_VALUES:,} values"
        if isinstance(value, SCALARS):
            return None
        if isinstance(value, int):
            return (
                None
                if int_readable(value)
                else (
                    [],
                    f"is an integer of more than {digits_limit():,} digits, which no JSON reader of Python reads "
                    "back: give it as a string",
                )
            )
        if isinstance(value, numbers.Number):  # a numpy scalar: written as its text, read back as a string
            return [], f"is a {type(value).__name__}, not a Python number: give it as float(...) or int(...)"
        if not isinstance(value, (dict, list, tuple)):
            return [], f"is {type(value).__name__}, not a JSON value (an object, list, string, number, bool or None)"
        if id(value) in self.open:
            return [], "holds itself (a cycle): JSON holds trees"
        if depth >= MAX_DEPTH:
            return [], f"is nested more than {MAX_DEPTH} levels deep"
        self.open.add(id(value))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(value, dict) and not json_key(key):
                return [], f"has a key of type {type(key).__name__}: JSON's keys are strings"
            found = self.problem(item, depth + 1)
            if found is not None:
                return [f"[{key!r}]" if isinstance(value, dict) else f"[{key}]", *found[0]], found[1]
        self.open.discard(id(value))
        return None


def json_problem(value: Any, where: str) -> str | None:
    """What keeps `value` from being written as JSON and read back as itself (see the module docstring), as
    "`where[path]` is ..."; None when nothing does."""
    found = _Walk().problem(value, 0)
    if found is None:
        return None
    path, what = found
    shown = "".join(path) if len(path) <= SHOWN_PATH else "".join(path[:SHOWN_PATH]) + f"...({len(path)} levels)"
    return f"`{where}{shown}` {what}"


def json_key(key: Any) -> bool:
    """Whether JSON can write `key` as an object's key (as its text, for a number, bool or None)."""
    return isinstance(key, KEYS) and (not isinstance(key, int) or int_readable(key))


def digits_limit() -> int:
    return sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0


def int_readable(value: int) -> bool:
    """Whether the int is written and read back as JSON: at most `digits_limit()` digits (0: no limit)."""
    limit = digits_limit()
    return not limit or abs(value).bit_length() < 3 * limit or abs(value) < 10**limit  # 3 bits: under a digit

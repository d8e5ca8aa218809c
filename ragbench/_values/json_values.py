"""What may be written into a run's files as JSON: the rule the sample writer holds every record to before
it writes it (and what a plugin returns before it is taken: a prediction's extras, a system's statistics),
so that ragbench's own reader never rejects a line its writer wrote, and nothing is written that reads back
as something else; and JSON text read under the same bound of depth (`json_of`: a tool call's arguments).

A JSON value is None, a bool, a str, a float (NaN and the infinities are written as ragbench's readers read
them), an int the reader can read back (at most `sys.get_int_max_str_digits()` digits: Python's int-parsing
limit, 4,300 by default), a list or tuple of JSON values, or a dict whose keys are str (or int, float, bool
or None, which JSON writes as their text) and whose values are JSON values; nested at most MAX_DEPTH
levels, at most MAX_VALUES values and MAX_BYTES bytes of JSON text in all, and no container inside itself.
Anything else (a set, an object, bytes) would be written as its `str` (or not at all): it is refused, named
with where it is. A value over a size bound is named as the deepest value that alone is over it (a string
of 500 MB at `trace[3]['outputs']['text']`), with its largest part where it is a container."""

from __future__ import annotations

import json
import numbers
import re
import sys
from collections.abc import Callable
from typing import Any, NamedTuple, TypeAlias

# A value as JSON holds it, for payloads whose shape is open (a vendor's request body, a record's extras): unlike
# `Any`, a reader must narrow it (isinstance) before using it. Shapes that are known get a TypedDict or a dataclass.
JsonValue: TypeAlias = "str | int | float | bool | None | list[JsonValue] | dict[str, JsonValue]"
JsonObject: TypeAlias = "dict[str, JsonValue]"


def json_object(value: object) -> JsonObject:
    """`value` where it is a JSON object, else an empty one: an open payload's object-valued field, read where it
    may be absent, null or of another shape."""
    return value if isinstance(value, dict) else {}


def json_list(value: object) -> list[JsonValue]:
    """`value` where it is a JSON array, else an empty one: an open payload's list-valued field, read where it may be
    absent, null or of another shape."""
    return value if isinstance(value, list) else []


MAX_DEPTH = 100  # levels of arrays and objects (the reader follows about 1,000; a record adds a few of its own)
MAX_VALUES = 1_000_000  # values in one record: a plugin's runaway structure is refused, not written for minutes
# Bytes of JSON text in one record (a sample line): a hundred 128k-token prompts in an agent's trace (about
# 50 MB) fit, and a line stays one that its readers hold a few times over in memory, never gigabytes.
MAX_BYTES = 64 * 2**20
UNDERCOUNT = 6  # the walk counts a character one byte; its JSON text may be six (an escape: \u0001)
SHOWN_PATH = 6  # of the path to a problem, the levels a message names
SCALARS = (str, float, bool, type(None))
NAMED_PARTS = (str, dict, list, tuple)  # the parts of a value over a size bound that may be over it, or named
KEYS = (str, int, float, bool, type(None))
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]')  # in JSON text: a string (passed over whole), a bracket
_INNERMOST = re.compile(r"\[\]|\{\}")
_NOT_BRACKETS = {code: None for code in range(128) if chr(code) not in "[]{}"}  # JSON text outside its strings


class Found(NamedTuple):
    """A problem: the path to it below the value walked, what is wrong there, and for a container over a size
    bound that none of its parts is over alone, the path (below it) to its largest part."""

    path: list[str]
    what: str
    part: list[str] | None = None


class _Walk:
    """One walk over a value: the values and bytes counted so far and the containers open on the way down."""

    def __init__(self, where: str) -> None:
        self.values = 0
        self.bytes = 0
        self.open: set[int] = set()
        self.where = where

    def problem(self, value: Any, depth: int) -> Found | None:
        """The first problem found at or below `value`, or None."""
        self.values += 1
        if isinstance(value, str):  # the most common value first, counted as `text_bytes` counts it
            counted = len(value) + 4 if value.isascii() else text_bytes(value)
            self.bytes += counted
            return None if counted <= MAX_BYTES else self._over(self.values - 1, self.bytes - counted, value)
        values, size = self.values - 1, self.bytes
        self.bytes += text_bytes(value)
        if self.bytes - size > MAX_BYTES:  # an integer's digits alone over it
            return self._over(values, size, value)
        if isinstance(value, SCALARS):
            return None
        if isinstance(value, int):
            return (
                None
                if int_readable(value)
                else Found(
                    [],
                    f"is an integer of more than {digits_limit():,} digits, which no JSON reader of Python reads "
                    "back: give it as a string",
                )
            )
        if isinstance(value, numbers.Number):  # a numpy scalar: written as its text, read back as a string
            return Found([], f"is a {type(value).__name__}, not a Python number: give it as float(...) or int(...)")
        if not isinstance(value, (dict, list, tuple)):
            return Found(
                [], f"is {type(value).__name__}, not a JSON value (an object, list, string, number, bool or None)"
            )
        if id(value) in self.open:
            return Found([], "holds itself (a cycle): JSON holds trees")
        if depth >= MAX_DEPTH:
            return Found([], f"is nested more than {MAX_DEPTH} levels deep")
        self.open.add(id(value))
        keyed = isinstance(value, dict)
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if keyed:
                if not json_key(key):
                    return Found([], f"has a key of type {type(key).__name__}: JSON's keys are strings")
                self.bytes += len(key) + 4 if isinstance(key, str) and key.isascii() else text_bytes(key)
            found = self.problem(item, depth + 1)
            if found is not None:
                return Found([_step(key, keyed), *found.path], found.what, found.part)
            if self.values > MAX_VALUES or self.bytes > MAX_BYTES:  # in all: maybe by this value alone
                found = self._over(values, size, value)
                if found is not None:
                    return found
        self.open.discard(id(value))
        return None

    def _over(self, values: int, size: int, value: Any) -> Found | None:
        """The problem of `value` (its walk begun at `values` and `size`) when it alone is over a size bound,
        named at the deepest value in it that is (`deepest_over`), or None when it is not."""
        by_values = self.values - values > MAX_VALUES
        if not by_values and self.bytes - size <= MAX_BYTES:
            return None
        path, value, part = deepest_over(value, by_values)
        bound = f"the bound on a whole {self.where}"
        if by_values:
            return Found(path, f"holds more than {MAX_VALUES:,} values, {bound}", part)
        if isinstance(value, (dict, list, tuple)):
            return Found(path, f"is over {MAX_BYTES:,} bytes of JSON, {bound}", part)
        what = f"a string of {len(value):,} characters" if isinstance(value, str) else "an integer of that many digits"
        return Found(path, f"is {what}, over {MAX_BYTES:,} bytes of JSON, {bound}")


def deepest_over(value: Any, by_values: bool) -> tuple[list[str], Any, list[str] | None]:
    """(path, value) of the deepest value in `value` (itself over the bound) that alone is over it, and the path
    below that of its largest part (None: it is a string, or its parts are numbers and the like, none worth
    naming and none over a bound alone)."""
    bound = MAX_VALUES if by_values else MAX_BYTES
    path: list[str] = []
    while isinstance(value, (dict, list, tuple)) and len(path) <= MAX_DEPTH:  # no deeper than the walk went
        keyed = isinstance(value, dict)
        parts = value.items() if isinstance(value, dict) else enumerate(value)
        sizes = [(measured(part, by_values), key, part) for key, part in parts if isinstance(part, NAMED_PARTS)]
        over = next(((key, part) for size, key, part in sizes if size > bound), None)
        if over is None:
            largest = max(sizes, key=lambda sized: sized[0], default=None)
            return path, value, None if largest is None else [_step(largest[1], keyed)]
        path.append(_step(over[0], keyed))
        value = over[1]
    return path, value, None


def _step(key: Any, keyed: bool) -> str:
    """The step of a path to a dict's value at `key`, or a list's at index `key`."""
    return f"[{key!r}]" if keyed else f"[{key}]"


def measured(value: Any, by_values: bool) -> int:
    """The values, or about the bytes of JSON text (`text_bytes`), that `value` holds, counted without recursion
    a container's parts at a time, up to the bound on them (a part of a value over it: it may have no end)."""
    bound = MAX_VALUES if by_values else MAX_BYTES
    total, pending = 1 if by_values else text_bytes(value), [value]
    while pending and total <= bound:
        item = pending.pop()
        parts = item.values() if isinstance(item, dict) else item if isinstance(item, (list, tuple)) else ()
        total += len(parts) if by_values else sum(map(text_bytes, parts))
        if isinstance(item, dict) and not by_values:
            total += sum(map(text_bytes, item))  # its keys
        pending.extend(part for part in parts if isinstance(part, (dict, list, tuple)))
    return total


def text_bytes(value: Any) -> int:
    """About the bytes of `value`'s JSON text, without what it holds: a string's UTF-8 bytes (escapes aside)
    and a key's, an integer's digits; a few for any other value, and for the separator after each."""
    if isinstance(value, str):  # UTF-8 counted where it can matter (a copy: not of a string that is over alone)
        if value.isascii() or len(value) > MAX_BYTES:
            return len(value) + 4
        return len(value.encode("utf-8", "surrogatepass")) + 4
    if isinstance(value, int) and not isinstance(value, bool):
        return value.bit_length() * 3 // 10 + 3
    return 6


class Checked(NamedTuple):
    """A value checked (`checked_json`): what keeps it from being written, and about the bytes of its JSON text
    as the walk counted them (`text_bytes`: up to UNDERCOUNT times fewer than it writes)."""

    problem: str | None
    bytes: int


def checked_json(value: Any, where: str) -> Checked:
    """`value` checked as `json_problem` checks it, with the bytes the walk counted."""
    walk = _Walk(where)
    found = walk.problem(value, 0)
    if found is None:
        return Checked(None, walk.bytes)
    said = f"`{where}{shown(found.path)}` {found.what}"
    part = "" if found.part is None else f"; its largest part: `{where}{shown(found.path + found.part)}`"
    return Checked(said + part, walk.bytes)


def plainly_json(text: str) -> bool:
    """Whether the value whose JSON text, as the writer writes it with nothing written as its `str`
    (`ragbench._storage.jsonl.plain_dumps`, which itself refuses a cycle and an integer Python does not write), is
    `text` plainly passes `json_problem`: nested at most MAX_DEPTH levels and of at most MAX_VALUES bytes and
    MAX_BYTES / UNDERCOUNT bytes, under which the walk finds no problem of size (each value writes at least a byte,
    and the walk counts at most UNDERCOUNT bytes for each byte written). Quicker than the walk; False only says:
    walk it."""
    bound = min(MAX_VALUES, MAX_BYTES // UNDERCOUNT)
    short = len(text) * 4 <= bound or (len(text) <= bound and len(text.encode()) <= bound)  # a character: <= 4 bytes
    return short and not _written_deeper(text, MAX_DEPTH)


def _written_deeper(text: str, levels: int) -> bool:
    """Whether JSON text the writer wrote (valid JSON) opens more than `levels` arrays and objects inside one
    another: its escapes taken out, every quote left opens or closes a string, outside which is ASCII; of the
    brackets there each round takes out the innermost pairs, one level (all in C: `nested_deeper`'s token by token
    walk took longer than the walk over the value)."""
    if text.count("[") + text.count("{") <= levels:  # no more opened (strings' brackets counted too): no deeper
        return False
    unescaped = text.replace("\\\\", "").replace('\\"', "")  # an escaped backslash first: `\\"` ends a string
    brackets = "".join(unescaped.split('"')[::2]).translate(_NOT_BRACKETS)
    for _ in range(levels):
        if not brackets:
            return False
        brackets = _INNERMOST.sub("", brackets)  # one pass: the pairs innermost before it, no more
    return bool(brackets)


def json_problem(value: Any, where: str) -> str | None:
    """What keeps `value` from being written as JSON and read back as itself (see the module docstring), as
    "`where[path]` is ..."; None when nothing does."""
    return checked_json(value, where).problem


def text_problem(value: Any, where: str, counted: int, written: Callable[[Any], int]) -> str | None:
    """Why `value`, whose bytes the walk counted `counted` (`Checked.bytes`), is not written: its JSON text, where
    it may be over MAX_BYTES (escapes and long numbers write more than the walk counts), measured by `written`
    and over it; its largest part named. None when it is not."""
    if counted * UNDERCOUNT <= MAX_BYTES:
        return None
    size = written(value)
    if size <= MAX_BYTES:
        return None
    _, _, part = deepest_over(value, by_values=False)
    largest = "" if part is None else f"; its largest part: `{where}{shown(part)}`"
    return f"`{where}` is {size:,} bytes of JSON, over {MAX_BYTES:,}, the bound on a whole {where}{largest}"


def shown(path: list[str]) -> str:
    """A path to a value, its first SHOWN_PATH levels where it is longer."""
    return "".join(path) if len(path) <= SHOWN_PATH else "".join(path[:SHOWN_PATH]) + f"...({len(path)} levels)"


class TooDeep(ValueError):
    """JSON text nested more than MAX_DEPTH levels: not read (what ragbench reads of it, it could not write)."""


def json_of(text: str, levels: int = MAX_DEPTH) -> Any:
    """`text` read as JSON nested at most `levels` levels; a ValueError when it is no JSON, `TooDeep` when it
    is nested deeper (found without recursion, before the parser, whose recursion would fail on it)."""
    if nested_deeper(text, levels):
        raise TooDeep(f"nested more than {levels} levels deep")
    return json.loads(text)


def nested_deeper(text: str, levels: int, start: int = 0) -> bool:
    """Whether the JSON value that begins at `start` of `text` opens more than `levels` arrays and objects inside
    one another (brackets in strings aside); read up to the value's end, however the text goes on."""
    depth = 0
    for token in _TOKEN.finditer(text, start):
        bracket = token.group()
        if bracket == "[" or bracket == "{":
            depth += 1
            if depth > levels:
                return True
        elif bracket == "]" or bracket == "}":
            depth -= 1
            if depth <= 0:
                return False
    return False


def json_key(key: Any) -> bool:
    """Whether JSON can write `key` as an object's key (as its text, for a number, bool or None)."""
    return isinstance(key, KEYS) and (not isinstance(key, int) or int_readable(key))


def digits_limit() -> int:
    return sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0


def int_readable(value: int) -> bool:
    """Whether the int is written and read back as JSON: at most `digits_limit()` digits (0: no limit)."""
    limit = digits_limit()
    return not limit or abs(value).bit_length() < 3 * limit or abs(value) < 10**limit  # 3 bits: under a digit

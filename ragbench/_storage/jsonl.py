"""The one JSONL reader and writer of ragbench (data files, predictions, checkpoints, recorded calls).

One error policy everywhere: a line that is cut short, is not JSON, is not UTF-8, is nested too deeply
to parse or (where objects are expected) is not a JSON object becomes a `RecordError` naming the file,
the line and the column, and reading goes on; the caller records and counts it, never drops it silently. Blank lines are
skipped. Appends are crash-safe: a line a killed process cut short stays alone (and is reported as
such when read), the next record starts on a line of its own.

Built on `jsonlines` (its Reader's per-line decoding and error reporting, its Writer for appends),
with the standard library's `json.loads` as the parser so every number parses as `json.loads` parses it
(jsonlines would pick orjson when installed, which rejects NaN and integers over 64 bits).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import jsonlines

from .._errors import ConfigError, RecordError
from .._regular_files import OUT_OF_RESOURCES as OUT_OF_RESOURCES
from .files import NotAFileError, file_there, naming, open_file

if TYPE_CHECKING:  # the JSON types only: ragbench._types is a layer beside this one
    from .._values.json_values import JsonObject

Item = tuple[int, Any]  # (0-based line index, parsed value or RecordError)
T = TypeVar("T")


class NestedTooDeep(ValueError):
    """JSON nested deeper than Python's parser can follow (its recursion limit): unparseable text like
    any other, never a RecursionError."""


def guarded(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """`parse` (json.loads or a wrapper of it) with a RecursionError turned into `NestedTooDeep`."""

    def parse_guarded(text: str) -> Any:
        try:
            return parse(text)
        except RecursionError:
            raise NestedTooDeep(
                f"nested too deeply to parse (over about {sys.getrecursionlimit()} levels of arrays and objects)"
            ) from None

    return parse_guarded


# json.loads for data read from files, records or replies: too-deep JSON is a ValueError (NestedTooDeep).
parse_json = guarded(json.loads)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@cache
def encoder(indent: int | None, sort_keys: bool, allow_nan: bool, plain: bool = False) -> json.JSONEncoder:
    """The encoder `json.dumps` makes of these options on each call (it keeps no state between calls): made once,
    the same text, a microsecond less a record (a build's docs store writes a line a passage). `plain`: one that
    raises (TypeError) at a value JSON has no type for, rather than writing its `str`."""
    return json.JSONEncoder(
        ensure_ascii=False, default=None if plain else str, indent=indent, sort_keys=sort_keys, allow_nan=allow_nan
    )


def json_text(value: Any, indent: int | None = None, sort_keys: bool = False, strict: bool = False) -> str:
    """The JSON text ragbench writes of `value` (non-ASCII text as is, what JSON cannot hold as its str),
    always encodable as UTF-8: a lone surrogate (a string such as "\\ud800", which JSON can hold and UTF-8
    cannot) is written as its \\u escape, and reads back as the same string. (Two lone surrogates that
    form a pair read back as the one character they pair into, as JSON defines.) `strict`: no NaN or
    Infinity literals either (`strict_json`)."""
    try:
        text = encoder(indent, sort_keys, not strict).encode(value)
    except ValueError:
        if not strict:
            raise
        # a non-finite float somewhere: the rare case pays for the walk
        text = json.dumps(
            finite_only(value), ensure_ascii=False, default=str, indent=indent, sort_keys=sort_keys, allow_nan=False
        )
    return _utf8_writable(text)


def _utf8_writable(text: str) -> str:
    """`text` with each lone surrogate written as its \\u escape (`json_text`)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")  # no lone surrogate: most non-ASCII text (the C codec checks faster than the regex)
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match[0]):04x}", text)
    return text


def dumps(record: Any) -> str:
    """One record as one line (without the newline). A non-finite float (a -inf logprob in a trace) is
    written as Python's json writes it (`-Infinity`), which every reader of ragbench reads back as the
    number it was; a sample's scores are always finite numbers or null (`typed_scores`)."""
    return json_text(record)


def plain_dumps(record: Any) -> str | None:
    """`dumps(record)` where the writer writes nothing of `record` as its `str` and meets no value it refuses
    (a cycle, an integer of more digits than Python writes, nesting past the recursion limit); else None. A
    sample's line is written as this text, which its checks read (ragbench._run.plugin_values)."""
    try:
        return _utf8_writable(encoder(None, False, True, plain=True).encode(record))
    except (TypeError, ValueError, RecursionError):
        return None


def strict_json(data: Any, indent: int | None = None) -> str:
    """JSON that every parser reads (RFC 8259: no NaN or Infinity, which Python's json writes by default
    and browsers and jq refuse): a non-finite float anywhere in `data` is written as the string "NaN",
    "Infinity" or "-Infinity", seen rather than turned into null. Objects JSON has no type for are
    written as their `str`; a lone surrogate as its escape (`json_text`)."""
    return json_text(data, indent=indent, strict=True)


def finite_only(data: Any) -> Any:
    """`data` with every non-finite float (NaN, an infinity) as its JSON literal's name, a string."""
    if isinstance(data, float) and not math.isfinite(data):
        return "NaN" if math.isnan(data) else "Infinity" if data > 0 else "-Infinity"
    if isinstance(data, dict):
        return {key: finite_only(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite_only(value) for value in data]
    return data


class StreamBroken(RecordError):
    """The stream broke off at this line (cut short or corrupt): nothing after it can be read."""


def line_error(where: str, exc: jsonlines.InvalidLineError, line: int | None = None) -> RecordError:
    """The RecordError of a line jsonlines could not read: not UTF-8, or not JSON at line:column; `line`: its
    number in the file, where jsonlines started counting after its start (`located_lines` from an offset)."""
    cause = exc.__cause__
    line = exc.lineno if line is None else line
    if isinstance(cause, UnicodeDecodeError):
        return RecordError(
            where,
            line,
            f"not UTF-8 (byte 0x{cause.object[cause.start]:02x} at column {cause.start + 1}); save the file as UTF-8",
        )
    if isinstance(cause, json.JSONDecodeError):
        if cause.pos >= len(cause.doc.rstrip()) or cause.msg.startswith("Unterminated string"):  # ran out of line
            return RecordError(
                where,
                line,
                f"line cut short at column {len(cause.doc.rstrip()) + 1} ({cause.msg} at column {cause.colno})",
            )
        return RecordError(where, line, f"not valid JSON at column {cause.colno}: {cause.msg}")
    if isinstance(cause, NestedTooDeep):
        return RecordError(where, line, f"{cause}; fix or remove the line")
    return RecordError(where, line, f"unreadable line ({cause or exc})")


class LocatedLine(NamedTuple):
    """A line of a file as `located_lines` reads it: where it is, and what it holds."""

    line: int  # 0-based line index
    start: int  # byte offset of the line's start
    end: int  # byte offset after the line (after its newline, where it has one)
    ended: bool  # the line ends with a newline (the last line of a file may not: cut short, or being written)
    value: Any  # the parsed value, or the line's RecordError


def read_lines(
    source: str | Path | Iterable[bytes], where: str | None = None, loads: Callable[[str], Any] = json.loads
) -> Iterator[Item]:
    """(0-based line index, value or RecordError) for every non-blank line of a file or of an open
    binary stream (a bz2 or tar member) or other lines of bytes; `where` names the stream in errors; `loads` parses a line
    (json.loads, or one that parses large lines elsewhere)."""
    if isinstance(source, (str, Path)):
        with open_file(source) as handle:
            yield from read_lines(handle, where or str(source), loads)
        return
    for located in located_lines(source, where, loads):
        yield located.line, located.value


def located_lines(
    source: Iterable[bytes],
    where: str | None = None,
    loads: Callable[[str], Any] = json.loads,
    line: int = 0,
    start: int = 0,
    most_bytes: int | None = None,
) -> Iterator[LocatedLine]:
    """Every non-blank line of an open binary stream with its line index and byte offsets (`LocatedLine`), as
    `read_lines` reads them; `line` and `start`: the index and offset of the stream's first line (a file read
    on from where an earlier reading stopped, its handle there). `most_bytes`: a line longer (a file handle's)
    is a RecordError saying so, never read whole (a samples file: no line its writer wrote is)."""
    lines = _Numbered(source, line, start, most_bytes)
    # jsonlines decodes each line to str before `loads` sees it (its annotation allows bytes too)
    reader = jsonlines.Reader(lines, loads=guarded(loads))  # type: ignore[arg-type]
    name = where or str(getattr(source, "name", "<stream>"))
    while True:
        value: Any
        try:
            value = reader.read(allow_none=True, skip_empty=True)
        except EOFError:  # the end of the stream, or (lines.failure) a stream that broke off
            if lines.failure is not None:
                yield broken_off(name, lines.number, lines.end, lines.failure)
            return
        except jsonlines.InvalidLineError as exc:
            value = line_error(name, exc, lines.number)
            if lines.too_long:
                value = RecordError(
                    name,
                    lines.number,
                    f"a line of {lines.end - lines.start:,} bytes, over the {most_bytes:,} a line of this file holds: "
                    "not read",
                )
        yield LocatedLine(lines.number - 1, lines.start, lines.end, lines.ended, value)


def broken_off(name: str, lines: int, end: int, failure: Exception) -> LocatedLine:
    """Where a stream broke off after `lines` lines, at byte offset `end`: a StreamBroken naming the next line."""
    broken = StreamBroken(
        name,
        lines + 1,
        f"cannot read past this line ({failure or type(failure).__name__}): the file is cut short or corrupt",
    )
    return LocatedLine(lines, end, end, False, broken)


class _Numbered:
    """The lines of a stream, remembering the number, offsets and end of the last one handed out, whether it
    was longer than `most_bytes` (handed out as a line that is no JSON) and the error that ended the stream
    early (a truncated bz2 or tar member raises EOFError or OSError mid-stream)."""

    def __init__(self, stream: Iterable[bytes], number: int = 0, start: int = 0, most_bytes: int | None = None) -> None:
        self.stream, self.number = stream, number
        self.start = self.end = start
        self.ended = True
        self.too_long = False
        self.most_bytes = most_bytes
        self.failure: Exception | None = None

    def __iter__(self) -> Iterator[bytes]:
        lines = self.stream if self.most_bytes is None else bounded_lines(self.stream, self.most_bytes)
        try:
            for line in lines:
                self.number += 1
                size = line.size if isinstance(line, _LongLine) else len(line)
                self.start, self.end, self.ended = self.end, self.end + size, line.endswith(b"\n")
                self.too_long = isinstance(line, _LongLine)
                yield line
        except (EOFError, OSError) as exc:
            self.failure = exc


class _LongLine(bytes):
    """A line over the bound, not read: what stands for it (no JSON), and its `size` in the stream."""

    size: int


def bounded_lines(stream: Any, most_bytes: int) -> Iterator[bytes]:
    """The lines of a binary stream with `readline`, each one longer than `most_bytes` passed over in pieces
    (memory: one piece at a time) and given as a `_LongLine`."""
    while line := stream.readline(most_bytes + 1):
        if len(line) <= most_bytes or line.endswith(b"\n"):
            yield line
            continue
        size = len(line)
        while (piece := stream.readline(2**20)) and not piece.endswith(b"\n"):
            size += len(piece)
        size += len(piece)
        long_line = _LongLine(b"\x00\n" if piece else b"\x00")
        long_line.size = size
        yield long_line


def objects(items: Iterator[Item], where: str) -> Iterator[Item]:
    """Only JSON objects pass; any other JSON value becomes a RecordError."""
    for index, value in items:
        if isinstance(value, (dict, RecordError)):
            yield index, value
        else:
            yield index, RecordError(where, index + 1, f"expected a JSON object, got {type(value).__name__}")


def line_record(located: LocatedLine, where: str, build: Callable[[dict[str, Any], str, int], T]) -> T | RecordError:
    """What `build(record, where, 1-based line)` makes of a located line's JSON object, or the RecordError saying
    why the line makes none (not an object, or `build` refused it)."""
    _, record = next(objects(iter([(located.line, located.value)]), where))
    if isinstance(record, RecordError):
        return record
    try:
        return build(record, where, located.line + 1)
    except RecordError as exc:
        return exc


def built_records(items: Iterable[Item], build: Callable[[JsonObject, int], T]) -> Iterator[T | RecordError]:
    """What `build(record, 0-based line index)` makes of each JSON object of `items` (`iter_jsonl`, `given_jsonl`),
    or the RecordError of a line that is none, or that `build` raised (a `require` that failed)."""
    for index, record in items:
        if isinstance(record, RecordError):
            yield record
            continue
        try:
            made: T | RecordError = build(record, index)
        except RecordError as exc:
            made = exc
        yield made


def iter_jsonl(path: str | Path) -> Iterator[Item]:
    """(0-based line index, record or RecordError) for every non-blank line; records are objects."""
    return objects(read_lines(path), str(path))


def read_records(path: str | Path) -> tuple[list[dict[str, Any]], list[RecordError]]:
    """Every object of a file, and the errors of the lines that are not one (to count and report)."""
    records: list[dict[str, Any]] = []
    errors: list[RecordError] = []
    for _, item in iter_jsonl(path):
        (errors if isinstance(item, RecordError) else records).append(item)
    return records, errors


def read_json(path: str | Path, expected: str) -> Any:
    """A whole JSON file; a file that is not UTF-8 or not JSON is a `ConfigError` naming the file, the line
    and the column, and what was `expected` there."""
    try:
        with open_file(path, "r") as handle:
            return parse_json(handle.read())
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); expected {expected}"
        ) from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); expected {expected}") from exc
    except NestedTooDeep as exc:
        raise ConfigError(f"{path}: {exc}; expected {expected}") from None
    except OSError as exc:
        if exc.errno in OUT_OF_RESOURCES or isinstance(exc, NotAFileError):  # the machine's fault, not the file's, or
            raise  # no file at all: said as such where it ends (never taken for a damaged file, made again)
        raise ConfigError(f"{path}: cannot read it ({exc.strerror or exc}); expected {expected}") from exc


def require(
    record: dict[str, Any], field: str, path: str | Path, line_index: int, types: type | tuple[type, ...] = object
) -> Any:
    """The value of a required field, or a `RecordError` naming file, line and field."""
    if field not in record:
        raise RecordError(str(path), line_index + 1, "missing field", field)
    value = record[field]
    if not isinstance(value, types):
        names = types.__name__ if isinstance(types, type) else "/".join(t.__name__ for t in types)
        raise RecordError(str(path), line_index + 1, f"expected {names}, got {type(value).__name__}", field)
    return value


class Appender:
    """Appends one record per line, flushed after each (jsonlines' Writer), raising OSErrors that name
    the file (a write's ENOSPC names none). After a failed write, closing does not raise the same
    fault again."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with naming(path):
            self._file = open_file(path, "a")
        self._writer = jsonlines.Writer(self._file, dumps=dumps, flush=True)
        self._failed = False

    def write(self, record: Any) -> None:
        try:
            with naming(self.path):
                self._writer.write(record)
        except OSError:
            self._failed = True
            raise

    def write_text(self, line: str) -> None:
        """A record already written as its line (`dumps`'s text, without the newline), flushed as `write` does."""
        try:
            with naming(self.path):
                self._file.write(line + "\n")
                self._file.flush()
        except OSError:
            self._failed = True
            raise

    def close(self) -> None:
        try:
            with naming(self.path):
                self._writer.close()
                self._file.close()
        except OSError:
            if not self._failed:
                raise

    def __enter__(self) -> Appender:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


def open_append(path: str | Path) -> Appender:
    """An appender that never glues a new line onto one a killed process cut short (that line stays
    alone and unparseable, the new one is whole)."""
    path = Path(path)
    if file_there(path) and path.stat().st_size:
        with naming(path), path.open("rb+") as existing:
            existing.seek(-1, 2)
            if existing.read(1) != b"\n":
                existing.write(b"\n")
    return Appender(path)

"""Files the user gives ragbench to read (`--human-labels`, `--price-table`, a task's data and rubrics, the files of
`score --predictions`): the one way they are opened, so that a FIFO (whose open and reads wait for a writer), a device
(/dev/zero never ends), a socket or a folder is refused at once, as `--data` refuses them, never waited on or read
until memory runs out. Every problem is one ConfigError naming the file (and its line, where one is at fault), the
true cause (not a regular file, bytes that are not UTF-8, JSON nested deeper than the reader follows) and the fix.
Too many open files, or no memory, is the machine's fault: raised as it is."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .._errors import ConfigError
from .files import NotAFileError, file_there, open_file
from .jsonl import OUT_OF_RESOURCES, Item, NestedTooDeep, objects, parse_json, read_lines


def given_handle(path: str | Path, expected: str, where: str | None = None) -> IO[bytes]:
    """`path` opened for reading, binary, for the caller's `with` (a reader that streams it, or hands it on); a
    ConfigError naming it (`where`: how it was given, e.g. `--human-labels FILE`; default the path) and what was
    `expected` there when it is not a regular file or cannot be opened."""
    where = where or str(path)
    try:
        handle: IO[bytes] = open_file(path)
    except NotAFileError as exc:
        raise not_a_file(where, exc, expected) from None
    except OSError as exc:
        if exc.errno in OUT_OF_RESOURCES:
            raise
        raise ConfigError(f"{where}: cannot be read ({(exc.strerror or str(exc)).lower()}); give {expected}") from None
    return handle


def not_a_file(where: str, exc: NotAFileError, expected: str) -> ConfigError:
    """The one line of something other than a regular file where the user gave one (`where`)."""
    return ConfigError(f"{where}: {exc.strerror}; ragbench reads only a regular file there: give {expected}")


def given_files_there(paths: Iterable[str | Path], expected: str, where: str | None = None) -> None:
    """Each of `paths` that is there a regular file (looked at, none opened), for a library that opens them itself
    (pyarrow, `datasets`): a ConfigError naming the first that is a FIFO, device, socket or folder (`where`: how it
    was given, default its path)."""
    for path in paths:
        try:
            file_there(path)
        except NotAFileError as exc:
            raise not_a_file(where or str(path), exc, expected) from None


@contextmanager
def open_given(path: str | Path, expected: str, where: str | None = None) -> Iterator[IO[bytes]]:
    """`given_handle`, closed when the block ends."""
    with given_handle(path, expected, where) as handle:
        yield handle


def given_bytes(path: str | Path, expected: str, where: str | None = None) -> bytes:
    """The bytes of the file at `path` (`open_given`); a read that fails is a ConfigError naming it."""
    with open_given(path, expected, where) as handle:
        try:
            data: bytes = handle.read()
        except OSError as exc:
            if exc.errno in OUT_OF_RESOURCES:
                raise
            message = (exc.strerror or str(exc)).lower()
            raise ConfigError(f"{where or path}: cannot be read ({message}); give {expected}") from None
    return data


class NotUtf8(ValueError):
    """Bytes that are not UTF-8: `line` (1-based) where the first such byte is, the message what it is and the fix."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


def utf8(data: bytes) -> str:
    """`data` as UTF-8 text; NotUtf8 naming the line and column of its first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        byte = f"0x{data[exc.start]:02x}"
        raise NotUtf8(line, f"not UTF-8 (byte {byte} at column {column}); save the file as UTF-8") from None


def decoded(data: bytes, where: str, expected: str, first_line: int = 1) -> str:
    """`data` (from `where`, its first line numbered `first_line`: a whole file, or one line of it) as UTF-8 text; a
    ConfigError naming the line and column of the first byte that is not UTF-8."""
    try:
        return utf8(data)
    except NotUtf8 as exc:
        raise ConfigError(f"{where}:{exc.line + first_line - 1}: {exc}: {expected}") from None


def given_text(path: str | Path, expected: str, option: str | None = None) -> str:
    """The UTF-8 text of the file at `path` (given as `option` FILE, where an option gave it): `given_bytes`,
    `decoded`."""
    where = f"{option} {path}" if option else str(path)
    return decoded(given_bytes(path, expected, where), where, expected)


def given_text_lines(path: str | Path, expected: str, option: str | None = None) -> list[tuple[int, str]]:
    """(1-based number, text) of every line of `given_text` that is not blank: the lines of a small file of records
    (JSONL, qrels) that a reader refuses by their number. A line ends at LF, CR LF or CR, as a text file's does, not
    at the other breaks `str.splitlines` knows: U+2028, U+2029 and U+0085 may stand as they are in a JSON string,
    and a record holding one is one line (as `iter_jsonl` reads it)."""
    lines = enumerate(io.StringIO(given_text(path, expected, option), newline=None), start=1)
    return [(number, line.removesuffix("\n")) for number, line in lines if line.strip()]


def given_json(path: str | Path, expected: str) -> Any:
    """The JSON value of the whole file at `path`; a ConfigError naming the file, its line and the cause (not UTF-8,
    not JSON, nested deeper than the reader follows) and what was `expected`."""
    text = given_text(path, expected)
    try:
        return parse_json(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); give {expected}") from None
    except NestedTooDeep as exc:
        raise ConfigError(f"{path}: {exc}, deeper than the reader allows; give {expected}") from None


def given_lines(path: str | Path, expected: str) -> Iterator[tuple[int, bytes]]:
    """(1-based number, bytes) of every line of the file at `path` that is not blank, read as it is needed (a large
    file is never held whole); the file refused as `open_given` refuses it."""
    with open_given(path, expected) as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                yield number, raw


def given_values(path: str | Path, expected: str) -> Iterator[Item]:
    """(0-based line index, JSON value or RecordError) of every line of the JSONL file at `path` that is not blank,
    read by the one JSONL reader (`read_lines`: a line not UTF-8, not JSON or nested too deeply is a RecordError
    naming the file, the line and the cause); the file refused as `open_given` refuses it."""
    with open_given(path, expected) as handle:
        yield from read_lines(handle, str(path))


def given_jsonl(path: str | Path, expected: str) -> Iterator[Item]:
    """`given_values` where each value is a JSON object (any other value a RecordError): `iter_jsonl` of a file the
    user gave."""
    return objects(given_values(path, expected), str(path))

"""A local CSV file's rows as records (the YAML tasks' `csv` format)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._checks import utf8_problem
from .._errors import ConfigError
from .._storage.csv_fields import large_fields
from .opened import compression, open_binary, open_plain
from .places import RecordPlace

Item = tuple[RecordPlace, Any]


def ends_open(path: Path) -> bool:
    """Whether a plain file's last line has no line end."""
    if compression(path) is not None:
        return False  # a compressed file cut short fails to decompress
    with open_plain(path) as handle:
        if handle.seek(0, io.SEEK_END) == 0:
            return False
        handle.seek(-1, io.SEEK_END)
        return handle.read(1) not in (b"\n", b"\r")


def csv_records(path: Path, delimiter: str | None, header_row: int | None = None) -> Iterator[Item]:
    """The rows as records keyed by the header's names (a byte order mark and spaces around a name taken
    off), the header being row `header_row` (from 0; the rows above it, a spreadsheet's title lines, are
    not data); a header naming a column twice is refused; a file that breaks off (cut short, corrupt) ends
    in one bad record after the rows read: a last row short of the header's columns without a line end
    is such a break, not a row with its last fields empty. A row of empty fields only is no record, as a
    blank line is not."""
    delimiter = delimiter or ("\t" if ".tsv" in path.suffixes else ",")
    cut_short = ends_open(path)
    with open_binary(path) as handle:
        rows = csv.DictReader(io.TextIOWrapper(handle, encoding="utf-8-sig", newline=""), delimiter=delimiter)
        position, above = 0, header_row or 0  # above: the rows above the header not yet read past
        short: Item | None = None  # a short row held back until another row shows it is not the file's last
        while True:
            try:
                with large_fields():  # values of any length, csv's limit for other readers left as it is
                    while above:  # before DictReader reads its header (at the first row)
                        next(rows.reader)
                        above -= 1
                    if position == 0 and rows.fieldnames is not None:  # reads the header
                        rows.fieldnames = _csv_header(
                            f"{path}:{rows.line_num}", list(rows.fieldnames), delimiter, header_row
                        )
                    row = next(rows)
            except StopIteration:
                if short is not None:
                    yield _cut_short(short, len(rows.fieldnames or []))
                return
            except UnicodeDecodeError:  # the whole file is in another encoding (Excel's, Latin-1, UTF-16)
                raise _not_utf8(path, rows.line_num) from None
            except (csv.Error, OSError, EOFError) as exc:
                if short is not None:
                    yield short
                place = RecordPlace(str(path), position, rows.line_num + 1)
                yield place, place.error(f"cannot read past this line ({exc}): the file is cut short or corrupt")
                return
            if short is not None:
                yield short
                short = None
            if not any(row.values()):
                continue  # a blank row, as a spreadsheet saves one (only separators): no record, as a blank line
            place = RecordPlace(str(path), position, rows.line_num)  # the row's last line, a quoted newline in it
            position += 1
            if None in row:
                yield place, place.error("more values than the header has columns")
                continue
            # a short row lacks its last columns' fields (csv.DictReader gives them None)
            record = {name: value for name, value in row.items() if value is not None}
            if cut_short and len(record) < len(row):
                short = place, record
            else:
                yield place, record


def _cut_short(short: Item, columns: int) -> Item:
    """The bad record of a last row short of the header's `columns` without a line end."""
    place, record = short
    return place, place.error(
        f"the last line has {len(record)} of the header's {columns} columns and no line end: the file is cut short"
    )


def _not_utf8(path: Path, line: int) -> ConfigError:
    where = utf8_problem(path) if compression(path) is None else None
    return ConfigError(f"{where or f'{path}: the rows after line {line} are not UTF-8'}; save the file as UTF-8")


def _csv_header(where: str, row: list[str], delimiter: str, header_row: int | None = None) -> list[str]:
    names = [name.strip() for name in row]
    other = next((d for d in (",", ";", "\t", "|") if d != delimiter and len(names) == 1 and d in names[0]), None)
    if other is not None:  # Excel in many locales writes ';'; a .tsv named .csv
        raise ConfigError(
            f"{where}: the header is one column {names[0][:60]!r}: the file separates its values "
            f"by {other!r}, not {delimiter!r}; set data.delimiter: {json.dumps(other)}"
        )
    for column, name in enumerate(names):
        if name in names[:column]:
            # with title rows above it, a file with fewer of them puts a data row (its empty cells) here
            moved = f", or set data.header_row (now {header_row}) to the header's row" if header_row else ""
            raise ConfigError(
                f"{where}: the header names column '{name}' twice (columns {names.index(name) + 1} "
                f"and {column + 1}); give each column its own name{moved}"
            )
    return names

"""A YAML task's `data:` section: where its records are (a path beside the file, a file name to find or
download, a hub dataset) and how they are read (format and the options only some formats read)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .located import Section

FORMATS = ("auto", "jsonl", "json", "csv", "parquet", "hf")


@dataclass(frozen=True)
class DataSpec:
    path: Path | None = None
    file: str | None = None
    url: str | None = None
    hf: str | None = None
    config: str | None = None
    split: str | None = None
    revision: str | None = None
    format: str = "auto"
    format_line: int = 0  # the line of `format` in the file (a registered format's errors name it)
    records: str | None = None
    keys_as: str | None = None  # json: the records are a mapping of key -> record, the key becoming this field
    delimiter: str | None = None
    header_row: int | None = None  # csv: the header's row, counted from 0 (the rows above it are not data)


# The `data` options that only some formats read, and those formats (`revision`: a hub dataset's, `hf`)
OPTION_FORMATS = {
    "records": ("json",),
    "keys_as": ("json",),
    "delimiter": ("csv",),
    "header_row": ("csv",),
    "config": ("hf",),
    "split": ("hf",),
}


def unused_data_option(data: DataSpec, fmt: str, where: str) -> str | None:
    """The first option of `data` that format `fmt` does not read, as one line naming it, the format and the
    fix; None when every option given is read."""
    for option, formats in OPTION_FORMATS.items():
        if getattr(data, option) is not None and fmt not in formats:
            return (
                f"data.{option} is read only with format {' or '.join(formats)}, and {where} is read as {fmt}: "
                f"remove it, or give data.format {formats[0]} if the data is that"
            )
    if data.revision is not None and data.hf is None:
        return f"data.revision is read only for a hub dataset (data.hf), and {where} is a local one: remove it"
    return None


def data_spec(section: Section | None, folder: Path) -> DataSpec | None:
    if section is None:
        return None
    section.only(DataSpec.__dataclass_fields__)
    given = [name for name in ("path", "file", "hf") if section.get(name, str) is not None]
    if len(given) > 1:
        raise section.error(given[1], f"give one of path, file and hf, not {' and '.join(given)}")
    if section.get("url", str) and not section.get("file", str):
        raise section.error("url", "url names where `file` is downloaded from: give `file` too")
    path = section.get("path", str)
    header_row = section.get("header_row", int)
    if header_row is not None and header_row < 0:
        raise section.error("header_row", f"expected the header's row counted from 0, got {header_row!r}")
    return DataSpec(
        path=(folder / path) if path else None,
        file=section.get("file", str),
        url=section.get("url", str),
        hf=section.get("hf", str),
        config=section.get("config", str),
        split=section.get("split", str),
        revision=section.get("revision", str),
        format=section.get("format", str, "auto"),
        format_line=section.at("format")[1],
        records=section.get("records", str),
        keys_as=section.get("keys_as", str),
        delimiter=section.get("delimiter", str),
        header_row=header_row,
    )

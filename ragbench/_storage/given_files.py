"""A file the user names on the command line for ragbench to read once, whole (`--human-labels`,
`--price-table`): read through `open_file`, so that a FIFO (whose open and reads wait for a writer), a device
(/dev/zero never ends), a socket or a folder is refused at once, as `--data` refuses them, never waited on or read
until memory runs out. Every problem is one ConfigError naming the option and the file."""

from __future__ import annotations

from pathlib import Path

from .._errors import ConfigError
from .files import NotAFileError, open_file
from .jsonl import OUT_OF_RESOURCES


def given_text(path: str | Path, option: str, expected: str) -> str:
    """The UTF-8 text of the file at `path`, given as `option` FILE; a ConfigError naming both and what was
    `expected` there when it is not a regular file, cannot be read, or is not UTF-8 (naming the line of the first
    byte that is not). Too many open files, or no memory, is the machine's fault: raised as it is."""
    where = f"{option} {path}"
    try:
        with open_file(path) as handle:
            data: bytes = handle.read()
    except NotAFileError as exc:
        raise ConfigError(f"{where}: {exc.strerror}; ragbench reads it whole: give {expected}") from None
    except OSError as exc:
        if exc.errno in OUT_OF_RESOURCES:
            raise
        raise ConfigError(f"{where}: cannot be read ({(exc.strerror or str(exc)).lower()}); give {expected}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"{where}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x}); save it as UTF-8 text: {expected}"
        ) from None

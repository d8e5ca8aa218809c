"""A file the user names for a command to write (`ragbench export ... --output FILE`): refused where something is
there and --overwrite was not given, or where it is a folder; with --overwrite, written by `write_atomically`,
which renames a new file over the name: a symbolic link there is replaced, never written through, and the file it
led to is left as it was (as a hard-linked file's other names are)."""

from __future__ import annotations

import os
from pathlib import Path

from .._errors import ConfigError


def check_output(path: Path, overwrite: bool, command: str) -> None:
    """A ConfigError, starting `command: `, unless `path` may be written as an output file: nothing there, or a
    file or a symbolic link (the link itself, not what it leads to, replaced) and `overwrite`."""
    if not os.path.lexists(path):
        return
    if path.is_dir() and not path.is_symlink():
        raise ConfigError(f"{command}: {path} is a folder; give a file name as --output")
    if not overwrite:
        what = "is a symbolic link: give --overwrite to replace the link (never the file it leads to)"
        raise ConfigError(
            f"{command}: {path} {what if path.is_symlink() else 'exists: give --overwrite to replace it'}, "
            "or another --output"
        )

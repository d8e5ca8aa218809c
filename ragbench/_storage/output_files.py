"""A file the user names for a command to write (`ragbench export ... --output FILE`): refused where something is
there and --overwrite was not given, where it is a folder or another thing that is no file (a named pipe, a
device, a socket: replacing it would take it away from whatever reads or serves it), and inside a ragbench run
folder (which holds only what ragbench writes there: the export could replace the run's results or samples); with
--overwrite, written by `write_atomically`, which renames a new file over the name: a symbolic link there is
replaced, never written through, and the file it led to is left as it was (as a hard-linked file's other names
are)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .._errors import ConfigError
from .rundir import RunDir

NOT_FILES = {
    stat.S_IFIFO: "a named pipe",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFSOCK: "a socket",
}


def check_output(path: Path, overwrite: bool, command: str) -> None:
    """A ConfigError, starting `command: `, unless `path` may be written as an output file: outside any ragbench
    run folder, and nothing there, or a file or a symbolic link (the link itself, not what it leads to, replaced)
    and `overwrite`."""
    run = run_folder_around(Path(path))
    if run is not None:
        raise ConfigError(
            f"{command}: {path} is inside the ragbench run folder {run}, which holds only what ragbench writes "
            "there (its results and samples could be replaced); give an --output outside it"
        )
    if not os.path.lexists(path):
        return
    if path.is_dir() and not path.is_symlink():
        raise ConfigError(f"{command}: {path} is a folder; give a file name as --output")
    other = NOT_FILES.get(stat.S_IFMT(os.lstat(path).st_mode))
    if other is not None:
        raise ConfigError(
            f"{command}: {path} is {other}, not a file, and is left as it is; give a file name as --output"
        )
    if not overwrite:
        what = "is a symbolic link: give --overwrite to replace the link (never the file it leads to)"
        raise ConfigError(
            f"{command}: {path} {what if path.is_symlink() else 'exists: give --overwrite to replace it'}, "
            "or another --output"
        )


def run_folder_around(path: Path) -> Path | None:
    """The ragbench run folder `path` would be written in (its folder, or one above it, holds a run.json ragbench
    wrote; links in the way followed), None where there is none."""
    folder = Path(os.path.realpath(path.parent))
    for place in (folder, *folder.parents):
        if (place / "run.json").is_file():
            try:
                if RunDir(place).record is not None:
                    return place
            except ConfigError:  # a run.json ragbench did not write: not a run folder
                continue
    return None

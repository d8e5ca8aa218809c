"""Removing a folder ragbench made, with what it holds, never a symbolic link: a link found anywhere inside (one the
user put there) is neither followed nor removed, and the folders holding it stay. `shutil.rmtree` would remove
such a link (it unlinks it); nothing that cleans up a cache uses it.

The walk goes by open folder descriptors (`os.fwalk`), so a folder swapped for a link while it is emptied is not
entered either."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class HoldsLink(OSError):
    """The folder holds a symbolic link (or is one): ragbench removes none."""

    def __init__(self, link: Path) -> None:
        super().__init__(
            errno.EEXIST,
            f"{link} is a symbolic link, which ragbench never removes nor follows; move it out, then remove again",
            str(link),
        )


def links_in(folder: Path) -> list[Path]:
    """The symbolic links under `folder` (itself when it is one), none of them followed."""
    if folder.is_symlink():
        return [folder]
    return [
        Path(where, name)
        for where, dirs, files in os.walk(folder, followlinks=False)
        for name in sorted([*dirs, *files])
        if os.path.islink(os.path.join(where, name))
    ]


def remove_tree(folder: Path) -> None:
    """Remove `folder` with what it holds; HoldsLink, before anything is removed, when a link is inside."""
    links = links_in(folder)
    if links:
        raise HoldsLink(links[0])
    remove_all_but_links(folder)


def remove_all_but_links(folder: Path) -> None:
    """Remove the files and folders under `folder`, then it, deepest first, leaving every link: a folder that
    holds one stays, and removing it fails (OSError: not empty); so does a `folder` that is not there."""
    for _, dirs, files, handle in os.fwalk(folder, topdown=False, follow_symlinks=False):
        for name in files:
            if not is_link(name, handle):
                os.unlink(name, dir_fd=handle)
        for name in dirs:
            if not is_link(name, handle):
                os.rmdir(name, dir_fd=handle)
    if folder.is_symlink():
        raise HoldsLink(folder)
    os.rmdir(folder)


def is_link(name: str, handle: int) -> bool:
    return stat.S_ISLNK(os.stat(name, dir_fd=handle, follow_symlinks=False).st_mode)

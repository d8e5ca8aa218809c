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


class LinkLeft(OSError):
    """A folder ragbench made and emptied still holds a symbolic link (one the user put there, `filename`), so it
    cannot be removed: the line names the link, the file it names and the fix (`fix`). Made by `of`; pickled and
    read back whole (a Ray task's error reaches the driver so)."""

    fix: str

    @classmethod
    def of(cls, folder: Path, link: Path) -> LinkLeft:
        try:
            target = f" to {os.readlink(link)}"
        except OSError:
            target = ""
        made = cls(
            errno.ENOTEMPTY,
            f"a symbolic link{target} in {folder}, a folder of ragbench's own that it empties (it removes no link "
            "and writes through none)",
            str(link),
        )
        made.fix = "move the link out of that folder (the file it names is left as it is)"
        return made


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
    holds one stays, and removing it fails (`LinkLeft`, naming the link: not empty); so does a `folder` that is not
    there (FileNotFoundError)."""
    for _, dirs, files, handle in os.fwalk(folder, topdown=False, follow_symlinks=False):
        for name in files:
            if not is_link(name, handle):
                os.unlink(name, dir_fd=handle)
        for name in dirs:
            if not is_link(name, handle):
                os.rmdir(name, dir_fd=handle)
    if folder.is_symlink():
        raise HoldsLink(folder)
    try:
        os.rmdir(folder)
    except OSError as exc:
        links = links_in(folder) if exc.errno == errno.ENOTEMPTY else []
        if links:
            raise LinkLeft.of(folder, links[0]) from None
        raise


def is_link(name: str, handle: int) -> bool:
    return stat.S_ISLNK(os.stat(name, dir_fd=handle, follow_symlinks=False).st_mode)

"""Removing a folder of index files ragbench wrote (an index, or what a build or a removal cut short left) so that
no step of it leaves a folder that looks like an index but is not: the folder is held with the build lock
(`staging`), marked as a leftover (`BUILD_MARK`), renamed away from its name, and only then emptied, its mark
last. A removal cut short (a kill, a failing disk) leaves at most a marked `<name>.removing-<hex>` folder, which no
run reads and `ragbench index cache --prune` finishes. A symbolic link inside (one the user put there) is never
removed nor followed: a folder holding one is not removed (`own_trees.HoldsLink`), and a link that comes while
a folder is emptied stays, with the folders holding it."""

from __future__ import annotations

import fcntl
import os
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..._storage.own_trees import HoldsLink, links_in, remove_all_but_links
from .staging import BUILD_MARK, MANIFEST_FILE

REMOVING = ".removing-"  # the name a folder being removed takes: `<name>.removing-<hex>`


class FolderBusy(Exception):
    """Another process holds the folder's build lock: a build is writing it."""


@contextmanager
def folder_held(folder: Path) -> Iterator[None]:
    """The build lock of `folder` (opened without following a link) held while the block runs; FolderBusy when
    another process holds it (a build at work in its `<out>.partial`: `staging.held_staging`)."""
    handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FolderBusy(f"{folder} is locked by a ragbench index build at work") from None
        yield
    finally:
        os.close(handle)


def is_held(folder: Path) -> bool:
    """Whether another process holds `folder`'s build lock now."""
    try:
        with folder_held(folder):
            return False
    except FolderBusy:
        return True


def remove_index_folder(folder: Path) -> None:
    """Remove `folder` (an index or a leftover, never a link) as the module says; FolderBusy while a build holds it,
    HoldsLink (nothing removed) while a link is inside."""
    with folder_held(folder):
        links = links_in(folder)
        if links:
            raise HoldsLink(links[0])
        empty_marked(set_aside(folder))


def set_aside(folder: Path) -> Path:
    """`folder` marked as a leftover and, unless it was one already, renamed to `<name>.removing-<hex>`: what the
    index was is gone from its name at once. Returns where it now is."""
    mark = folder / BUILD_MARK
    if mark.is_file() and not mark.is_symlink():
        return folder
    mark.touch()
    away = folder.with_name(f"{folder.name}{REMOVING}{secrets.token_hex(4)}")
    try:
        os.rename(folder, away)
    except OSError:
        mark.unlink()  # still the index it was
        raise
    return away


def empty_marked(folder: Path) -> None:
    """Delete a marked folder: its manifest first (so that no part of it is an index), its other files and folders
    (HoldsLink, nothing removed, while a link is inside), then its mark, then it."""
    links = links_in(folder)
    if links:
        raise HoldsLink(links[0])
    for child in sorted(folder.iterdir(), key=lambda child: child.name != MANIFEST_FILE):
        if child.name == BUILD_MARK or child.is_symlink():  # a link come meanwhile: its folder stays
            continue
        if child.is_dir():
            remove_all_but_links(child)
        else:
            child.unlink()
    (folder / BUILD_MARK).unlink()
    folder.rmdir()


def empty_named(folder: Path, names: Sequence[str]) -> list[str]:
    """Delete the files `names` of a marked folder (`set_aside`'s), the first (its manifest) first, so that no
    part of it is an index, each only where it is a file (never a link), then its mark, then the folder where
    nothing else is in it. Whatever else is there (a file of the user's, come while a new index was built)
    stays, with the folder: the names of what stayed, in order (empty where the folder is gone)."""
    for name in names:
        path = folder / name
        if path.is_file() and not path.is_symlink():
            path.unlink()
    (folder / BUILD_MARK).unlink(missing_ok=True)
    left = sorted(os.listdir(folder))
    if not left:
        folder.rmdir()
    return left

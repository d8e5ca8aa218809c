"""The folder an index is built in, `<out>.partial`, held by one build at a time.

The build holds an OS lock (`fcntl.flock`) on the folder itself from before it empties it to after it is
renamed to `<out>`, so a second `ragbench index build` of the same `--out` is refused at once instead of
emptying the first one's files under it (two builds once wrote one folder: an index of neither corpus).
The kernel lets go of the lock when the process ends however it ends, so the folder a killed build left
is taken over by the next build: it holds `BUILD_MARK`, the first file a build writes there. A
`<out>.partial` without it (a folder of the user's), that is a link or that holds one, is refused, never emptied;
a failed build removes what it wrote there, never a link (`own_trees`).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from ..._errors import ConfigError
from ..._storage.own_trees import links_in, remove_all_but_links

MANIFEST_FILE = "manifest.json"  # what an index is known by: written last by a build, removed first by a removal
BUILD_MARK = ".ragbench-build"  # made first in the folder a build holds; removed before it becomes the index
ATTEMPTS = 5  # a folder renamed or removed between opening and locking it (its build just ended): open again


@contextmanager
def held_staging(out: Path, flag: str = "--out") -> Iterator[Path]:
    """`<out>.partial`, empty (`BUILD_MARK` aside) and held by this build while the block runs; removed when
    the block raises (the block removes the mark and renames it to `out` to keep it). `flag`: what the user named
    `out` with, as the refusals say it (a page index built on first use: its retriever's `index`)."""
    staging = out.with_name(out.name + ".partial")
    not_ours = f"{flag} {out}: {staging} is not a folder a ragbench index build made"
    refuse_no_folder(staging, not_ours, flag)
    handle = locked_folder(staging, out, "index build", flag)
    try:
        left = list(staging.iterdir())
        if left and not (staging / BUILD_MARK).is_file():
            raise ConfigError(f"{not_ours} (it holds files, and no {BUILD_MARK}); remove it, or choose another {flag}")
        links = links_in(staging)
        if links:
            raise ConfigError(
                f"{flag} {out}: {staging} holds a symbolic link, {links[0]}, which ragbench never removes; "
                f"move it out, or choose another {flag}"
            )
        for child in left:  # what a killed build left
            remove_all_but_links(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        (staging / BUILD_MARK).touch()
        try:
            yield staging
        except BaseException:
            with suppress(OSError):  # a link put there meanwhile: it stays, and so does its folder
                remove_all_but_links(staging)
            raise
    finally:
        os.close(handle)


@contextmanager
def held_lock(lock: Path, out: str | Path, build: str) -> Iterator[None]:
    """`lock`, a folder beside `out` kept for the lock alone (it holds `BUILD_MARK` only), held (`locked_folder`)
    while the block runs and removed after: for a build whose own folders its index's save replaces (a page
    index's), so that no lock on them would last the build. A killed build's (its mark there) is taken over by the
    next; anything else there before (the user's: a file, a link, a folder without the mark, even an empty one) is
    refused in one line and left as it is. The folders above it made for it are removed with it where the build
    left them empty (a build that failed)."""
    not_ours = f"--out {out}: {lock} is not a folder a ragbench {build} made"
    refuse_no_folder(lock, not_ours)
    made = not lock.exists()
    above = [folder for folder in lock.parents if not folder.exists()]  # the nearest first
    handle = locked_folder(lock, out, build)
    mark = lock / BUILD_MARK
    try:
        if not mark.is_file() and not (made and not any(lock.iterdir())):
            raise ConfigError(f"{not_ours} (it was there, without {BUILD_MARK}); remove it, or choose another --out")
        mark.touch()
        try:
            yield
        finally:
            with suppress(OSError):  # files put there since are not ours to remove
                mark.unlink()
                for folder in (lock, *above):
                    folder.rmdir()
    finally:
        os.close(handle)


def refuse_no_folder(path: Path, not_ours: str, flag: str = "--out") -> None:
    """A ConfigError, `not_ours` and the fix, where `path` is a symbolic link or a file: never a build's folder."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise ConfigError(
            f"{not_ours} (it is a {'symbolic link' if path.is_symlink() else 'file'}); remove it, "
            f"or choose another {flag}"
        )


def locked_folder(folder: Path, out: str | Path, build: str, flag: str = "--out") -> int:
    """`folder` (made where missing), the one a `build` ("index build") of `out` writes, open and held with an
    exclusive `flock` until its descriptor (returned) is closed or the process ends; a ConfigError naming it and
    the fix where another process holds it. One renamed or removed between opening and locking it (its build just
    ended) is opened again."""
    for _ in range(ATTEMPTS):
        folder.mkdir(parents=True, exist_ok=True)
        handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(handle)
            raise ConfigError(
                f"{flag} {out}: another ragbench {build} is writing it ({folder} is locked); "
                f"wait for it to end, or choose another {flag}"
            ) from None
        if _same_folder(folder, handle):
            return handle
        os.close(handle)
    raise ConfigError(
        f"{flag} {out}: {folder} keeps being replaced by another process; wait for it to end, or choose another {flag}"
    )


def _same_folder(path: Path, handle: int) -> bool:
    """`path` is still the folder open as `handle` (not renamed to an index or removed since)."""
    try:
        return os.path.samestat(os.stat(path), os.fstat(handle))
    except FileNotFoundError:
        return False

"""Finding a task's data file: an explicit path, the local data folder, or a download; and telling cheaply
whether it changed."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .._values.names import inside
from .cache_root import cache_root
from .given_files import given_files_there

# While set (`local_only`), the data files a task would download, refused and recorded instead.
_REFUSED_DOWNLOADS: ContextVar[list[str] | None] = ContextVar("refused_downloads", default=None)


@contextmanager
def local_only() -> Iterator[list[str]]:
    """Find data files without downloading any (what runs on this machine now): a file that is not on disk is
    refused as missing, and its name added to the list yielded."""
    refused: list[str] = []
    token = _REFUSED_DOWNLOADS.set(refused)
    try:
        yield refused
    finally:
        _REFUSED_DOWNLOADS.reset(token)


def data_dir() -> Path:
    return Path(os.environ.get("RAGBENCH_DATA_DIR") or cache_root() / "data")


def is_saved_dataset(folder: Path) -> bool:
    """A folder written by `Dataset.save_to_disk` or `DatasetDict.save_to_disk`."""
    return (folder / "dataset_dict.json").is_file() or (folder / "state.json").is_file()


def check_data_path(path: Path, label: str) -> None:
    """A data path a run can read: a file or a folder (through a symlink too), or one that does not exist
    (said elsewhere). A pipe, device or socket is refused, `label` naming where it was given: a run opens
    its data more than once, a FIFO waits for a writer and /dev/zero never ends."""
    if path.exists() and not (path.is_file() or path.is_dir()):
        raise ConfigError(
            f"{label}: not a file or folder (a pipe or device); a run opens its data more than once: save it to a file"
        )


def named_data(task: str, path: Path | None) -> Path | None:
    """The path --data names for `task` (a ConfigError where nothing is there), None where it names none: the task
    then looks in its own places."""
    if path is not None and not path.exists():
        raise ConfigError(f"--data {task}={path}: no such file or folder")
    return path


def resolve_data_file(task: str, filename: str, explicit: Path | None, url: str | None) -> Path:
    """`explicit` (from --data TASK=PATH) if given, else DATA_DIR/filename, downloading it when
    online. Offline, the error names the file and where to put it."""
    if explicit is not None:
        given_files_there([explicit], f"task {task}'s data file", f"--data {task}={explicit}")
        if not explicit.is_file():
            raise ConfigError(f"--data {task}={explicit}: no such file")
        return explicit
    local = inside(data_dir(), *Path(filename).parts, what=f"task {task}: data file")  # not `..`, nor `/abs`
    if local.is_file():
        return local
    where = f"put {filename} at {local} or pass --data {task}=PATH"
    if url is None:
        raise ConfigError(f"task {task} needs {filename}, which cannot be downloaded automatically; {where}")
    refused = _REFUSED_DOWNLOADS.get()
    if refused is not None:
        refused.append(filename)
        raise ConfigError(f"task {task} needs {filename}, which is not on disk (not downloaded now); {where}")
    import http.client  # and email, urllib.request: for a download alone
    import urllib.request

    made = [folder for folder in reversed(local.parents) if not folder.exists()]  # outermost first
    partial = local.with_suffix(local.suffix + f".part-{os.getpid()}")
    try:
        local.parent.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(url, timeout=30) as response, open(partial, "wb") as out:
            shutil.copyfileobj(response, out)
            promised, got = response.headers.get("Content-Length"), out.tell()
        if promised is not None and promised.isdigit() and int(promised) != got:  # read(n) takes a cut as the end
            raise OSError(f"the connection closed after {got} of {promised} bytes")
        partial.replace(local)
    except (OSError, http.client.HTTPException) as exc:  # refused, timed out, cut short (IncompleteRead)
        remove_made(partial, made)
        raise ConfigError(f"task {task} needs {filename}; downloading {url} failed ({exc}); {where}") from exc
    return local


def remove_made(partial: Path, made: list[Path]) -> None:
    """What a failed download made, gone: its partial file and the folders made for it (innermost first, each
    only while empty), so that no empty data folder stays where the file was expected."""
    partial.unlink(missing_ok=True)
    for folder in reversed(made):
        try:
            folder.rmdir()
        except OSError:  # something else was put there meanwhile
            break


def stat_fingerprint(path: str | Path) -> dict[str, Any]:
    """What tells cheaply that local data changed, no byte of it read: the resolved path and the size and
    modification time (ns) of the file, or of every file under the folder (folded into one digest; an
    archive is a file). An edit, a copy over it or a new download changes it; a mere read does not."""
    root = Path(path).expanduser().resolve()
    if root.is_file():
        stat = root.stat()
        return {"path": str(root), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    if not root.is_dir():
        return {"path": str(root), "missing": True}
    digest, files = hashlib.sha256(), 0
    for file in sorted(f for f in root.rglob("*") if f.is_file()):
        stat = file.stat()
        digest.update(f"{file.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
        files += 1
    return {"path": str(root), "files": files, "sha256": digest.hexdigest()[:16]}

"""Finding a task's data file: an explicit path, the local data folder, or a download."""
from __future__ import annotations

import os
import shutil
import urllib.request
from pathlib import Path

from .._errors import ConfigError


def data_dir() -> Path:
    return Path(os.environ.get("RAGBENCH_DATA_DIR", Path.home() / ".cache" / "ragbench" / "data"))


def resolve_data_file(task: str, filename: str, explicit: Path | None, url: str | None) -> Path:
    """`explicit` (from --data TASK=PATH) if given, else DATA_DIR/filename, downloading it when
    online. Offline, the error names the file and where to put it."""
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"--data {task}={explicit}: no such file")
        return explicit
    local = data_dir() / filename
    if local.is_file():
        return local
    where = f"put {filename} at {local} or pass --data {task}=PATH"
    if url is None:
        raise ConfigError(f"task {task} needs {filename}, which cannot be downloaded automatically; {where}")
    try:
        local.parent.mkdir(parents=True, exist_ok=True)
        partial = local.with_suffix(local.suffix + ".part")
        with urllib.request.urlopen(url, timeout=30) as response, open(partial, "wb") as out:
            shutil.copyfileobj(response, out)
        partial.replace(local)
    except OSError as exc:
        raise ConfigError(f"task {task} needs {filename}; downloading {url} failed ({exc}); {where}") from exc
    return local

"""What the benchmark folders share about the data the user names with --data: that a path is given, and that
each file the task reads under it is there (what is there but no file is refused by its reader, given_files)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ragbench.api import ConfigError, Task


def given_data(task: Task, reads: str, form: str, where: str) -> Path:
    """The path --data names for `task`; without one, a ConfigError: "task NAME reads `reads`: pass
    --data NAME=`form``where`" (`where` says what the path is, where to get it)."""
    if task.data_path is None:
        raise ConfigError(f"task {task.name} reads {reads}: pass --data {task.name}={form}{where}")
    return task.data_path


def all_found(files: Mapping[str, Path], missing: Callable[[str, Path], str]) -> dict[str, Path]:
    """`files` (what -> path) when every one exists; else a ConfigError of `missing(what, path)` for the first
    that does not."""
    for what, path in files.items():
        if not path.exists():
            raise ConfigError(missing(what, path))
    return dict(files)

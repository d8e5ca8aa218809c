"""Finding YAML task files: one given by path (`--tasks FILE.yaml`), one a package ships (a catalogue's
`{"yaml": "package:path.yaml"}`), and those of a folder (`--include-path DIR`: every `*.yaml` / `*.yml`
file under it whose top level names a `task`; other YAML files are left alone). Each is read for its
header only (ragbench._yaml_tasks.header); its full spec is read when its task is loaded."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path

from .._errors import ConfigError
from .header import TaskHeader, read_header, task_header

SUFFIXES = (".yaml", ".yml")


def is_task_file(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


def given_file(path: str | Path) -> Path:
    """A task file given by path (`--tasks FILE.yaml`); a `ConfigError` where there is none."""
    if not Path(path).is_file():
        raise ConfigError(f"--tasks {path}: no such file")
    return Path(path)


def file_header(path: str | Path) -> TaskHeader:
    """The header of a task file given by path (`--tasks FILE.yaml`)."""
    return task_header(given_file(path))


def packaged_header(resource: str, name: str) -> TaskHeader:
    """The header of a task file a package ships (`package:path/inside.yaml`), declaring task `name`."""
    package, sep, inside = resource.partition(":")
    if not sep or not inside:
        raise ConfigError(f"task '{name}': yaml {resource!r} is not of the form package:path/inside.yaml")
    header = _packaged_header(Path(str(resources.files(package).joinpath(inside))), resource)
    if header.name != name:
        raise ConfigError(f"{resource} declares task '{header.name}', but the catalogue names it '{name}'")
    return header


def _packaged_header(path: Path, resource: str) -> TaskHeader:
    """The header of a file a package ships, read again only where the file changed (its inode, size or
    modification time): every registry reads every catalogue's files (a third of `Registry.discover`), which an
    installed package does not change. The caller's own copy."""
    try:
        stat = path.stat()
    except OSError:
        return task_header(path, resource)  # its read says what is wrong
    header = _header_as_of(path, resource, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    return dataclasses.replace(header, system_args=copy.deepcopy(header.system_args))


@lru_cache(maxsize=1024)
def _header_as_of(path: Path, resource: str, inode: int, size: int, modified_ns: int) -> TaskHeader:
    return task_header(path, resource)


def folder_tasks(folder: str | Path) -> list[TaskHeader]:
    """The headers of the YAML tasks under `folder`, in path order; a task declared twice is a ConfigError."""
    root = Path(folder)
    if not root.is_dir():
        raise ConfigError(f"--include-path {folder}: no such folder")
    headers: dict[str, TaskHeader] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and is_task_file(p.name)):
        header = read_header(path)
        if header is None:
            continue
        if header.name in headers:
            raise ConfigError(
                f"--include-path {folder}: task '{header.name}' is declared twice, in "
                f"{headers[header.name].source} and {header.source}"
            )
        headers[header.name] = header
    return list(headers.values())


def include(names: Iterable[str], folders: Iterable[str | Path]) -> list[str]:
    """`--tasks` names with each YAML task of the folders (by name, alias or group) replaced by its file's
    path, so that the run's config names the files it ran; other names are left to the registry."""
    by_name: dict[str, list[str]] = {}
    for folder in folders:
        for header in folder_tasks(folder):
            for name in (header.name, *header.aliases):
                by_name[name] = [header.source]
            for group in header.groups:
                by_name.setdefault(group, []).append(header.source)
    out: list[str] = []
    for name in names:
        for item in by_name.get(name, [name]):
            if item not in out:
                out.append(item)
    return out

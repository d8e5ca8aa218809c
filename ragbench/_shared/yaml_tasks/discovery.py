"""Finding YAML task files: one given by path (`--tasks FILE.yaml`), one a package ships (a catalogue's
`{"yaml": "package:path.yaml"}`), and those of a folder (`--include-path DIR`: every `*.yaml` / `*.yml`
file under it whose top level names a `task`; other YAML files are left alone)."""
from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from ..._errors import ConfigError
from .located import read_yaml
from .spec import TaskSpec, load_spec

SUFFIXES = (".yaml", ".yml")


def is_task_file(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


def file_spec(path: str | Path) -> TaskSpec:
    """The spec of a task file given by path (`--tasks FILE.yaml`)."""
    if not Path(path).is_file():
        raise ConfigError(f"--tasks {path}: no such file")
    return load_spec(Path(path))


def packaged_spec(resource: str, name: str) -> TaskSpec:
    """The spec of a task file a package ships (`package:path/inside.yaml`), declaring task `name`."""
    package, sep, inside = resource.partition(":")
    if not sep or not inside:
        raise ConfigError(f"task '{name}': yaml {resource!r} is not of the form package:path/inside.yaml")
    spec = load_spec(Path(str(resources.files(package).joinpath(inside))), resource)
    if spec.name != name:
        raise ConfigError(f"{resource} declares task '{spec.name}', but the catalogue names it '{name}'")
    return spec


def folder_tasks(folder: str | Path) -> list[TaskSpec]:
    """The checked specs of the YAML tasks under `folder`, in path order; a broken one is a ConfigError."""
    root = Path(folder)
    if not root.is_dir():
        raise ConfigError(f"--include-path {folder}: no such folder")
    specs: dict[str, TaskSpec] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and is_task_file(p.name)):
        data = read_yaml(path, str(path))
        if not isinstance(data, dict) or "task" not in data:
            continue
        spec = load_spec(path)
        if spec.name in specs:
            raise ConfigError(f"--include-path {folder}: task '{spec.name}' is declared twice, in "
                              f"{specs[spec.name].source} and {spec.source}")
        specs[spec.name] = spec
    return list(specs.values())


def include(names: Iterable[str], folders: Iterable[str | Path]) -> list[str]:
    """`--tasks` names with each YAML task of the folders (by name, alias or group) replaced by its file's
    path, so that the run's config names the files it ran; other names are left to the registry."""
    by_name: dict[str, list[str]] = {}
    for folder in folders:
        for spec in folder_tasks(folder):
            for name in (spec.name, *spec.aliases):
                by_name[name] = [spec.source]
            for group in spec.groups:
                by_name.setdefault(group, []).append(spec.source)
    out: list[str] = []
    for name in names:
        for item in by_name.get(name, [name]):
            if item not in out:
                out.append(item)
    return out

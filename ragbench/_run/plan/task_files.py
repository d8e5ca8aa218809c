"""The YAML task files a run read tasks from (`--tasks FILE.yaml`, a `--data` key that is one), as run.json records
them (`task_files`: each file as the run was given it -> the task it declares and its resolved path; the file's
sha256 is the task's `task_configs` `yaml_sha256`), and found again by a later command over the run folder that is
not given them (`ragbench rescore RUN`, `ragbench --replay RUN`): there the task is its file as the run read it, or
one line says the file is gone or changed and how to point at it (`--include-path DIR`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..._catalog import TASK_FILE
from ..._config.what import RunWhat
from ..._errors import ConfigError
from ..._registry import Registry
from ..._values.json_values import JsonObject, json_object
from ..._yaml_tasks.discovery import folder_tasks, is_task_file
from ..._yaml_tasks.task import YamlTask
from .planned_task import PlannedTask


def recorded_task_files(what: RunWhat, planned: Sequence[PlannedTask], registry: Registry) -> JsonObject:
    """run.json's `task_files` of a run of `what`: each task file it names (in --data's keys, then --tasks, as
    given), of a task it runs, with that task's name and the file's resolved path."""
    files = {
        str(Path(p.task.spec.source).resolve()): p.name
        for p in planned
        if isinstance(p.task, YamlTask) and registry.entry("tasks", p.name).plugin == TASK_FILE
    }
    recorded: JsonObject = {}
    for given in filter(is_task_file, [*what.data, *what.tasks]):
        path = str(Path(given).resolve())
        if path in files:
            recorded[given] = {"task": files[path], "path": path}
    return recorded


def with_task_files(config: Mapping[str, Any], folders: Sequence[str], command: str) -> dict[str, Any]:
    """A run's recorded `config` (run.json's) with each task it read from a file named by that file, found again:
    in the `folders` given (`--include-path`: a file declaring the task), else where the run read it; a file whose
    sha256 is not the one the run recorded is not the task it ran. A --data key naming a task file becomes the
    task's name. A run.json of an older ragbench records no files: its tasks stay names (`folders` still name
    theirs)."""
    recorded = {given: json_object(file) for given, file in json_object(config.get("task_files")).items()}
    read_from = {str(file.get("task")): str(file.get("path")) for file in recorded.values()}
    in_folders = {header.name: header.source for folder in folders for header in folder_tasks(folder)}
    task_configs = json_object(config.get("task_configs"))
    tasks = []
    for name in config.get("tasks") or []:
        places = [place for place in (in_folders.get(name), read_from.get(name)) if place is not None]
        sha256 = json_object(task_configs.get(name)).get("yaml_sha256")
        tasks.append(_found(name, places, sha256, read_from.get(name), command) if places else name)
    data = {
        str(recorded[key].get("task")) if key in recorded else key: path
        for key, path in json_object(config.get("data")).items()
    }
    return {**config, "tasks": tasks, "data": data}


def _found(name: str, places: list[str], sha256: Any, read_from: str | None, command: str) -> str:
    """The first of `places` holding task `name`'s file with the `sha256` recorded (none recorded: the first
    there); a ConfigError saying what became of the file where none does."""
    changed = None
    for place in places:
        if Path(place).is_file():
            now = hashlib.sha256(Path(place).read_bytes()).hexdigest()
            if not isinstance(sha256, str) or now == sha256:
                return place
            changed = changed or (place, now)
    point = "give the folder that holds it as it was with --include-path DIR"
    where = read_from or places[0]
    if changed is None:
        raise ConfigError(f"{command}: task '{name}' was read from {where}, which is not there now: {point}")
    place, now = changed
    what = "which changed since" if place == where else f"and {place} is another file"
    raise ConfigError(
        f"{command}: task '{name}' was read from {where}, {what} (sha256 {sha256[:12]} then, {now[:12]} now): it is "
        f"not the task the run ran; put the file back as it was, or {point}"
    )

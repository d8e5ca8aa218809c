"""The local data files a run read (`--data KEY=PATH`), as run.json records them (`data_paths`: each KEY -> its PATH
resolved against the run's working folder), and found again by a later command over the run folder
(`ragbench rescore RUN`, `ragbench --replay RUN`), whatever folder it is started from: there each KEY's data is the
recorded path. `--replay`, which reads the data, is refused in one line where the file is gone or changed since the
run (its fingerprint, run.json's `data`, is not the one recorded); `rescore`, which scores the recorded predictions
and reads the data only for a metric that asks for the task's examples, takes the recorded path where it is as the
run read it and the path as given otherwise (a run folder copied to another machine is rescored without its data).
A run.json of an older ragbench records no paths: its --data paths are read as given."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..._config.what import RunWhat
from ..._errors import ConfigError
from ..._storage.datafiles import stat_fingerprint
from ..._values.json_values import JsonObject, json_object


def recorded_data_paths(what: RunWhat) -> JsonObject:
    """run.json's `data_paths` of a run of `what`: each --data PATH that is a local file or folder, resolved."""
    paths = {key: Path(path).expanduser() for key, path in what.data.items()}
    return {key: str(path.resolve()) for key, path in paths.items() if path.exists()}


def with_data_paths(
    config: Mapping[str, Any], fingerprints: Mapping[str, Any], command: str, required: bool = True
) -> dict[str, Any]:
    """A run's recorded `config` (run.json's) with each --data PATH the run resolved (`data_paths`) in its place;
    where that file or folder is gone, or is not as the run's data fingerprints (`fingerprints`, run.json's `data`)
    recorded it: a ConfigError of one line, or (`required` False) the path as given kept."""
    resolved = json_object(config.get("data_paths"))
    if not resolved:
        return dict(config)
    recorded = {
        str(fingerprint.get("path")): fingerprint
        for fingerprint in map(json_object, fingerprints.values())
        if fingerprint.get("path")
    }
    data = dict(json_object(config.get("data")))
    for key, path in resolved.items():
        if key not in data or not isinstance(path, str):
            continue
        given = f"--data {key}={data[key]}"
        then, there = recorded.get(path), Path(path).exists()
        changed = there and then is not None and stat_fingerprint(path) != then
        if not required and (changed or not there):
            continue
        if not there:
            raise ConfigError(f"{command}: the run read {given} from {path}, which is not there now: put it back")
        if changed:
            raise ConfigError(
                f"{command}: the run read {given} from {path}, which changed since (its size or modification "
                "time): it is not the data the run ran on; put the file back as it was"
            )
        data[key] = path
    return {**config, "data": data}

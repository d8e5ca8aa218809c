"""The built-in catalogue: `registry.yaml`, served to the registry by the built-in plugin
packages (`ragbench.tasks`, `ragbench.plugins`, `ragbench.metrics`, `ragbench._engines`),
each for its own section, through the same hook a third-party plugin implements."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any

import yaml


def load_yaml(text: str) -> Any:
    """yaml.safe_load, through libyaml when PyYAML has it: the pure-Python loader made the reproduction
    manifests a visible part of every command's start (docs/performance.md, "Figures behind the code")."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@cache
def _parsed(package: str, resource: str) -> Any:
    """Parsed once per process (the reproduction manifests are not cheap to parse); never handed out, only
    copies."""
    return load_yaml(resources.files(package).joinpath(resource).read_text(encoding="utf-8"))


def _copied(value: Any) -> Any:
    """`value` with every mapping and list in it new (the scalars YAML reads are immutable)."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


def packaged_yaml(package: str, resource: str) -> Any:
    """The YAML file `resource` that `package` ships, the caller's own copy: what one caller changes in it,
    no later caller sees."""
    return _copied(_parsed(package, resource))


class PackagedSection(Mapping[str, object]):
    """The section `key` of the YAML file `resource` that `package` ships, parsed at its first read, not when it is
    made: a catalogue hands out the reproduction manifests (300 KB of YAML) this way, and only `ragbench
    reproduce` reads them. Each one is its caller's own copy, as `packaged_yaml`'s."""

    def __init__(self, package: str, resource: str, key: str) -> None:
        self._where = (package, resource, key)
        self._read: dict[str, object] | None = None

    def _data(self) -> dict[str, object]:
        if self._read is None:
            package, resource, key = self._where
            self._read = dict(_copied(_parsed(package, resource).get(key) or {}))
        return self._read

    def __getitem__(self, name: str) -> object:
        return self._data()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data())

    def __len__(self) -> int:
        return len(self._data())


def section(*keys: str) -> dict[str, dict[str, Any]]:
    """The sections `keys` of registry.yaml (each a mapping), the caller's own copies (as `packaged_yaml`)."""
    data = _parsed("ragbench", "registry.yaml")
    return {key: _copied(data.get(key) or {}) for key in keys}

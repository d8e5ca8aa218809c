"""The built-in catalogue: `registry.yaml`, served to the registry by the built-in plugin
packages (`ragbench.tasks`, `ragbench.plugins`, `ragbench.metrics`, `ragbench._engines`),
each for its own section, through the same hook a third-party plugin implements."""

from __future__ import annotations

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


def section(*keys: str) -> dict[str, dict[str, Any]]:
    """The sections `keys` of registry.yaml (each a mapping), the caller's own copies (as `packaged_yaml`)."""
    data = _parsed("ragbench", "registry.yaml")
    return {key: _copied(data.get(key) or {}) for key in keys}

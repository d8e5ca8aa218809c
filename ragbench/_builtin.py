"""The built-in catalogue: `registry.yaml`, served to the registry by the built-in plugin
packages (`ragbench.tasks`, `ragbench.plugins`, `ragbench.metrics`, `ragbench._engines`),
each for its own section, through the same hook a third-party plugin implements."""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import yaml


def load_yaml(text: str) -> Any:
    """yaml.safe_load, through libyaml when PyYAML has it (5x faster: the reproduction manifests took
    0.4 s of every command's start with the pure-Python loader)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@lru_cache(maxsize=1)
def registry_yaml() -> dict[str, Any]:
    return load_yaml(resources.files("ragbench").joinpath("registry.yaml").read_text(encoding="utf-8"))


def section(*keys: str) -> dict[str, Any]:
    data = registry_yaml()
    return {key: data.get(key) or {} for key in keys}

"""The built-in catalogue: `registry.yaml`, served to the registry by the built-in plugin
packages (`ragbench.tasks`, `ragbench.plugins`, `ragbench.metrics`, `ragbench.engines`),
each for its own section, through the same hook a third-party plugin implements."""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import yaml


@lru_cache(maxsize=1)
def registry_yaml() -> dict[str, Any]:
    text = resources.files("ragbench").joinpath("registry.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def section(*keys: str) -> dict[str, Any]:
    data = registry_yaml()
    return {key: data.get(key) or {} for key in keys}

"""Importing a `package.module:attribute` target (plugins, scripts, pluggable components), and an optional
dependency on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any, cast

from ._errors import ConfigError


def import_target(target: str) -> Any:
    """The object named by `package.module:attr` (attr may be dotted). Raises what the import raises."""
    module_name, _, attr = target.partition(":")
    obj = importlib.import_module(module_name)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def load_callable(target: str, what: str, hint: str) -> Callable[..., Any]:
    """`import_target` for a user-given option: any failure, or an object that cannot be called, is one clear
    ConfigError line."""
    try:
        loaded = import_target(target)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"{what}: cannot load '{target}' ({exc}); {hint}") from exc
    if not callable(loaded):
        raise ConfigError(f"{what}: '{target}' is a {type(loaded).__name__}, not something to call; {hint}")
    return cast(Callable[..., Any], loaded)  # callable, checked above (mypy keeps Any as Any)


def import_extra(module: str, missing: str) -> ModuleType:
    """`module`, an optional dependency imported on first use; without it, the ConfigError `missing` (what needs it
    and the `pip install` that brings it), one line."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(missing) from None

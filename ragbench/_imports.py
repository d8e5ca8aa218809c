"""Importing a `package.module:attribute` target (plugins, scripts, pluggable components), and an optional
dependency on first use."""

from __future__ import annotations

import importlib
import traceback
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
    and the `pip install` that brings it), one line. Installed but failing to import (a package it imports is
    broken: a torchvision built for another torch), the ConfigError names the error that failed it, at its root,
    not the `pip install` that would change nothing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name is not None and is_part(exc.name, module):
            raise ConfigError(missing) from None
        raise ConfigError(broken_import(module, exc)) from None
    except Exception as exc:  # what an installed package raises as it is imported
        raise ConfigError(broken_import(module, exc)) from None


def is_part(name: str, module: str) -> bool:
    """Whether `name` is `module` or a package above it (the module itself missing, not one it imports)."""
    return module == name or module.startswith(name + ".")


def broken_import(module: str, error: BaseException) -> str:
    """One line: `module` is installed but its import failed, with the error that failed it (`root_error`)."""
    return f"{module} is installed but cannot be imported: {root_error(error)}"


def root_error(error: BaseException) -> str:
    """The first error of the chain that ended in `error` (the cause a wrapper such as transformers' lazy import
    hides), its first line, and where it was raised."""
    root = error
    while (cause := root.__cause__ or root.__context__) is not None and cause is not root:
        root = cause
    frames = traceback.extract_tb(root.__traceback__)
    where = f" (in {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    reason = (str(root).strip().splitlines() or [""])[0]
    return f"{type(root).__name__}: {reason}{where}"

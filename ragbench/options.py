"""`key=value` options from the command line, and building plugins from them with clear errors."""
from __future__ import annotations

import inspect
from typing import Any, Iterable

import yaml

from .errors import ConfigError


def parse_assignments(items: Iterable[str], flag: str) -> dict[str, Any]:
    """["top_n=5", "chat=true"] -> {"top_n": 5, "chat": True}; values are read as YAML scalars."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} {item!r}: expected KEY=VALUE")
        try:
            out[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = value
    return out


def accepted_options(cls: type) -> set[str] | None:
    """Keyword options `cls(...)` accepts, following `**kwargs` up the class hierarchy;
    None when anything is accepted."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        parameters = inspect.signature(klass.__init__).parameters.values()
        names |= {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)} - {"self"}
        if not any(p.kind == p.VAR_KEYWORD for p in parameters):
            return names
        if klass is object:
            break
    return None


def construct(cls: type, args: dict[str, Any], label: str, positional: tuple = ()) -> Any:
    accepted = accepted_options(cls)
    if accepted is not None:
        unknown = sorted(set(args) - accepted)
        if unknown:
            raise ConfigError(f"{label}: unknown option(s) {', '.join(unknown)} "
                              f"(accepted: {', '.join(sorted(accepted - {'data_path'})) or 'none'})")
    try:
        return cls(*positional, **args)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{label}: {exc}") from exc

"""`key=value` options from the command line, and building plugins from them with clear errors."""
from __future__ import annotations

import inspect
import types
import typing
from typing import Any, Iterable

import yaml

from ..errors import ConfigError


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


# The command-line flag that sets a plugin's options, by the first word of `construct`'s label.
FLAGS = {"task": "--task-arg", "system": "--system-arg", "metric": "--metric-arg", "retriever": "--retriever-arg",
         "index": "--retriever-arg"}


def _init_parameters(cls: type) -> tuple[dict[str, inspect.Parameter], dict[str, Any], bool]:
    """The keyword parameters `cls(...)` accepts, following `**kwargs` up the class hierarchy, their
    type hints, and whether anything is accepted: an `__init__` whose `**kwargs` cannot go on to a
    parent (the next `__init__` up is object's) consumes them itself. A class with no `__init__` of
    its own anywhere takes no options (object's)."""
    parameters: dict[str, inspect.Parameter] = {}
    hints: dict[str, Any] = {}
    chain = [klass for klass in cls.__mro__ if "__init__" in vars(klass)]
    for klass, parent in zip(chain, chain[1:] + [None]):
        if klass is object:
            break
        try:
            hints = {**typing.get_type_hints(klass.__init__), **hints}
        except Exception:  # an annotation that does not resolve only loses the type check
            pass
        signature = inspect.signature(klass.__init__).parameters.values()
        for p in signature:
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self":
                parameters.setdefault(p.name, p)
        if not any(p.kind == p.VAR_KEYWORD for p in signature):
            break
        if parent is object:
            return parameters, hints, True
    return parameters, hints, False


def accepted_options(cls: type) -> set[str] | None:
    """Keyword options `cls(...)` accepts; None when anything is accepted."""
    parameters, _, anything = _init_parameters(cls)
    return None if anything else set(parameters)


def _expected_type(hint: Any) -> tuple[type, ...] | None:
    """The scalar types a hint allows (`int`, `float | None` ...), or None when it is not a plain scalar."""
    members = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    allowed = tuple(t for t in members if t in (int, float, bool, str, type(None)))
    return allowed if allowed and len(allowed) == len(members) else None


def _type_problem(value: Any, hint: Any) -> str | None:
    """Why `value` (as read from KEY=VALUE) does not fit the parameter's type, or None."""
    allowed = _expected_type(hint)
    if allowed is None or str in allowed:
        return None
    fits = any(isinstance(value, t) and not (t in (int, float) and isinstance(value, bool)) for t in allowed)
    fits = fits or (float in allowed and isinstance(value, int) and not isinstance(value, bool))
    if fits:
        return None
    names = " or ".join({int: "an integer", float: "a number", bool: "true/false",
                         type(None): "null"}[t] for t in allowed)
    return names


def _form(name: str, parameter: inspect.Parameter | None, hint: Any) -> str:
    """`name=<int, default 5>`: how an option is written."""
    allowed = _expected_type(hint)
    kind = "/".join(t.__name__ if t is not type(None) else "null" for t in allowed) if allowed else "value"
    default = "" if parameter is None or parameter.default is inspect.Parameter.empty else f", default {parameter.default!r}"
    return f"{name}=<{kind}{default}>"


def construct(cls: type, args: dict[str, Any], label: str, positional: tuple = (),
              injected: dict[str, Any] | None = None) -> Any:
    """`cls(*positional, **args)`, every problem with the options a `ConfigError` naming the flag,
    the plugin, the option and the accepted form. `injected` are what the core hands a plugin rather
    than the user (e.g. the run's `registry`): each is passed when `cls.__init__` names it, and is
    not an option."""
    flag = FLAGS.get(label.split()[0], "option")
    parameters, hints, anything = _init_parameters(cls)
    injected = {name: value for name, value in (injected or {}).items() if parameters.pop(name, None) is not None}
    shown = {name: p for name, p in parameters.items() if name != "data_path"}
    accepted = ", ".join(_form(n, p, hints.get(n)) for n, p in shown.items()) or "none"
    prefix = f"{label.split()[-1]}." if flag == "--metric-arg" else ""
    unknown = [] if anything else sorted(set(args) - set(parameters))
    if unknown:
        given = ", ".join(f"{prefix}{name}={args[name]}" for name in unknown)
        raise ConfigError(f"{flag} {given}: {label} has no option {', '.join(repr(n) for n in unknown)} "
                          f""
                          + (f"(accepted: {accepted})" if shown else "(it takes no options)"))
    for name, value in args.items():
        problem = _type_problem(value, hints.get(name)) if name in shown else None
        if problem:
            raise ConfigError(f"{flag} {prefix}{name}={value}: {label} takes {problem} for {name} "
                              f"({_form(name, parameters.get(name), hints.get(name))})")
    try:
        return cls(*positional, **args, **injected)
    except (TypeError, ValueError) as exc:
        given = " ".join(f"{prefix}{k}={v}" for k, v in args.items() if k != "data_path")
        raise ConfigError(f"{label}: {exc}" + (f" (given {flag} {given}; accepted: {accepted})" if given else "")
                          ) from exc

"""`key=value` options from the command line, and building plugins from them with clear errors."""

from __future__ import annotations

import functools
import inspect
import operator
import types as types_module
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import annotated_types
import yaml

from .._errors import ConfigError, did_you_mean, shown_value

# `yaml.safe_load`'s loader, its scanner and parser in C where PyYAML has libyaml (5 times as fast on a value of
# megabytes: a --metric-arg list of 2.4M items is read in 9 s, not 48), else in Python; the same values either way
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


CLOSE = 0.75  # how alike a misspelt option's name and an option's are to be suggested (limt: limit; not model: delta)


def parse_assignments(items: Iterable[str], flag: str) -> dict[str, object]:
    """["top_n=5", "chat=true"] -> {"top_n": 5, "chat": True}; values are read as YAML scalars (any value
    `yaml.safe_load` makes: a date too, not only JSON's)."""
    out: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} {item!r}: expected KEY=VALUE")
        try:
            out[key.strip()] = yaml.load(value, Loader=SAFE_LOADER) if value.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = value
    return out


# The command-line flag that sets a plugin's options, by the first word of `construct`'s label.
FLAGS = {
    "task": "--task-arg",
    "system": "--system-arg",
    "metric": "--metric-arg",
    "retriever": "--retriever-arg",
    "index": "--build-arg",  # index build --retriever NAME
    "reranker": "--reranker-arg",
    "refiner": "--refiner-arg",
}


InitParameters = tuple[dict[str, inspect.Parameter], dict[str, object], bool]


def _init_parameters(cls: type) -> InitParameters:
    """`_read_init_parameters(cls)`, read once a class while the `__init__`s and names it reads stay those it was
    read from (a class given another `__init__` is read again); the dicts are the caller's own."""
    parameters, hints, anything = _read_once(cls, _init_fingerprint(cls))
    return dict(parameters), dict(hints), anything


@functools.lru_cache(maxsize=1024)
def _read_once(cls: type, fingerprint: tuple[object, ...]) -> InitParameters:
    """`_read_init_parameters(cls)` memoised by class and `_init_fingerprint`: a run builds each plugin's options from
    its class's signature and type hints, which resolving anew cost a fifth of a small run's planning."""
    return _read_init_parameters(cls)


def _init_fingerprint(cls: type) -> tuple[object, ...]:
    """What `_read_init_parameters(cls)` reads its answer from: each `__init__` and `options_from` up the class
    hierarchy (those of an `options_from` class too) and the withheld options."""
    own = tuple((vars(klass).get("__init__"), vars(klass).get("options_from")) for klass in cls.__mro__)
    passed = tuple(
        _init_fingerprint(passed_to) for _, passed_to in own if isinstance(passed_to, type) and passed_to is not cls
    )
    return own, passed, tuple(getattr(cls, "withheld_options", ()))


def _read_init_parameters(cls: type) -> InitParameters:
    """The keyword parameters `cls(...)` accepts, following `**kwargs` up the class hierarchy, their
    type hints (`Annotated` bounds kept), and whether anything is accepted: an `__init__` whose
    `**kwargs` cannot go on to a parent (the next `__init__` up is object's) consumes them itself. A
    class with no `__init__` of its own anywhere takes no options (object's). The names in the class's
    `withheld_options` are left out: a subclass that takes its parent's options but those (siglip: colpali's).
    A class that names `options_from` passes its `**options` on to that class, whose `__init__` declares them once
    for both (dense: the one-process retriever's query options, also its shards' front's)."""
    withheld = set(getattr(cls, "withheld_options", ()))
    parameters: dict[str, inspect.Parameter] = {}
    hints: dict[str, object] = {}  # name -> its type hint, a type form
    chain = [klass for klass in cls.__mro__ if "__init__" in vars(klass)]
    for klass, parent in zip(chain, chain[1:] + [None]):
        if klass is object:
            break
        init = vars(klass)["__init__"]
        hints = {**_resolved_hints(init), **hints}
        signature = inspect.signature(init).parameters.values()
        for p in signature:
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self" and p.name not in withheld:
                parameters.setdefault(p.name, p)
        if not any(p.kind == p.VAR_KEYWORD for p in signature):
            break
        if (passed_to := vars(klass).get("options_from")) is not None:
            if not isinstance(passed_to, type):
                raise ConfigError(
                    f"{klass.__name__}.options_from is {passed_to!r}, not the class whose __init__ declares the "
                    "options it passes on (a plugin's mistake: tell its authors)"
                )
            more, more_hints, anything = _read_init_parameters(passed_to)
            for name, p in more.items():
                if name not in withheld:
                    parameters.setdefault(name, p)
            return parameters, {**more_hints, **hints}, anything
        if parent is object:
            return parameters, hints, True
    return parameters, hints, False


def _resolved_hints(function: Any) -> dict[str, object]:
    """`function`'s type hints, `Annotated` bounds kept; where one does not resolve (a name imported for the type
    checker only, as a `registry: Registry`), the others still do: only that parameter loses its type check."""
    try:
        return typing.get_type_hints(function, include_extras=True)
    except Exception:
        pass
    hints: dict[str, object] = {}
    for name, annotation in inspect.get_annotations(function).items():
        try:
            hints[name] = eval(annotation, function.__globals__) if isinstance(annotation, str) else annotation
        except Exception:  # this one only
            continue
    return hints


def accepted_options(cls: type) -> set[str] | None:
    """Keyword options `cls(...)` accepts; None when anything is accepted."""
    parameters, _, anything = _init_parameters(cls)
    return None if anything else set(parameters)


def named_options(cls: type) -> set[str]:
    """The keyword options `cls(...)` names in the `__init__` of it or of a class it derives from (not those a
    `**options` takes)."""
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {
        name
        for klass in cls.__mro__
        if "__init__" in vars(klass)
        for name, parameter in inspect.signature(vars(klass)["__init__"]).parameters.items()
        if parameter.kind in kinds and name != "self"
    }


def option_defaults(cls: type) -> dict[str, object]:
    """The options `cls(...)` accepts that have a default, with it."""
    parameters, _, _ = _init_parameters(cls)
    return {name: p.default for name, p in parameters.items() if p.default is not inspect.Parameter.empty}


def task_args_for(name: str, task_class: type, task_args: Mapping[str, object]) -> dict[str, object]:
    """The options of task `name` among a run's `--task-arg`s: unscoped `key` options go to every task that accepts
    them; `task.key` to that task only."""
    accepted = accepted_options(task_class)
    args = {k: v for k, v in task_args.items() if "." not in k and (accepted is None or k in accepted)}
    return {**args, **scoped_args(name, task_args)}


def scoped_args(name: str, args: Mapping[str, object]) -> dict[str, object]:
    """The options given to `name` alone among `NAME.key` options (`--task-arg`, `--metric-arg`), by their key."""
    return {k[len(name) + 1 :]: v for k, v in args.items() if k.startswith(name + ".")}


# --- typed options: scalars, Literal choices and annotated_types bounds (Annotated[int, Ge(1)]) ------------
_SCALARS = (int, float, bool, str, type(None))
_NAMES = {int: "an integer", float: "a number", bool: "true/false", str: "a string", type(None): "null"}
_BOUND_TEXT = (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<="))


@dataclass(frozen=True)
class OptionType:
    """What a type hint allows, when it is something the pre-flight can check."""

    types: tuple[type, ...]  # the scalar types
    choices: tuple[Any, ...] = ()  # Literal values
    bounds: tuple[Any, ...] = ()  # annotated_types Gt/Ge/Lt/Le on numbers

    def fits(self, value: Any) -> bool:
        if self.choices and value in self.choices and type(value) in {type(c) for c in self.choices}:
            return True
        if str in self.types:  # KEY=VALUE reads 5 as an integer: a string option converts what it gets
            return True
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        typed = any(isinstance(value, t) and not (t in (int, float) and isinstance(value, bool)) for t in self.types)
        typed = typed or (float in self.types and number)
        if not typed:
            return False
        return not number or all(_within(value, bound) for bound in self.bounds)

    def describe(self) -> str:
        """`an integer >= 1 or null`, `one of auto, chat`."""
        bounds = " and ".join(
            f"{sign} {getattr(b, attr)}" for b in self.bounds for attr, sign in _BOUND_TEXT if hasattr(b, attr)
        )
        names = [_NAMES[t] + (f" {bounds}" if bounds and t in (int, float) else "") for t in self.types]
        if self.choices:
            names.insert(0, "one of " + ", ".join(str(c) for c in self.choices))
        return " or ".join(names)

    def short(self) -> str:
        """`int >= 1/null`, `auto|chat`: how the accepted-options list writes it."""
        bounds = "".join(
            f" {sign} {getattr(b, attr)}" for b in self.bounds for attr, sign in _BOUND_TEXT if hasattr(b, attr)
        )
        kinds = ["|".join(str(c) for c in self.choices)] if self.choices else []
        kinds += [
            ("null" if t is type(None) else t.__name__) + (bounds if t in (int, float) else "") for t in self.types
        ]
        return "/".join(kinds)


_COMPARE = {"gt": operator.gt, "ge": operator.ge, "lt": operator.lt, "le": operator.le}


def _within(value: float, bound: Any) -> bool:
    return all(compare(value, getattr(bound, attr)) for attr, compare in _COMPARE.items() if hasattr(bound, attr))


def option_type(hint: Any) -> OptionType | None:
    """What `hint` allows (`int`, `float | None`, `Literal["auto", "chat"]`, `Annotated[int, Ge(1)] | None`),
    or None when it is not made of plain scalars (anything passes)."""
    types: list[type] = []
    choices: list[Any] = []
    bounds: list[Any] = []
    pending = [hint]
    while pending:
        current = pending.pop(0)
        origin = typing.get_origin(current)
        if origin is typing.Annotated:
            current, *metadata = typing.get_args(current)
            for item in metadata:
                bounds.extend(item if isinstance(item, annotated_types.GroupedMetadata) else [item])
            pending.insert(0, current)
        elif origin in (typing.Union, types_module.UnionType):
            pending[:0] = typing.get_args(current)
        elif origin is typing.Literal:
            choices.extend(typing.get_args(current))
        elif current in _SCALARS:
            types.append(current)
        else:
            return None
    bounds = [
        b
        for b in bounds
        if isinstance(b, (annotated_types.Gt, annotated_types.Ge, annotated_types.Lt, annotated_types.Le))
    ]
    return OptionType(tuple(types), tuple(choices), tuple(bounds)) if types or choices else None


def type_problem(value: Any, hint: Any) -> str | None:
    """What the option takes, when `value` (as read from KEY=VALUE) does not fit its type; else None."""
    allowed = option_type(hint)
    return None if allowed is None or allowed.fits(value) else allowed.describe()


def option_form(name: str, parameter: inspect.Parameter | None, hint: Any) -> str:
    """`name=<int >= 1, default 5>`: how an option is written."""
    allowed = option_type(hint)
    default = (
        "" if parameter is None or parameter.default is inspect.Parameter.empty else f", default {parameter.default!r}"
    )
    return f"{name}=<{allowed.short() if allowed else 'value'}{default}>"


def engine_option_problems(
    cls: type,
    options: Mapping[str, object],
    typed: Mapping[str, object] | None = None,
    more: tuple[set[str], str] | None = None,
) -> list[str]:
    """An engine's options checked without building it, one line per problem: names `cls.__init__`
    accepts, those in `typed` (name -> hint: options the engine passes on verbatim) and `more` (names
    and how to say them, e.g. a library's keyword arguments; when `cls` takes `**options` and there is
    no `more`, any name), then each value against its type hint."""
    parameters, hints, anything = _init_parameters(cls)
    hints = {**hints, **(typed or {})}
    known = sorted(set(parameters) - {"model"} | set(typed or {}))
    unknown = [] if anything and more is None else sorted(set(options) - set(known) - (more[0] if more else set()))
    accepted = ", ".join(known) + (f", or {more[1]}" if more else "")
    hint = did_you_mean(unknown[0], known, most=3, cutoff=CLOSE) if len(unknown) == 1 else ""
    problems = [f"unknown option(s) {', '.join(unknown)}{hint} (accepted: {accepted})"] if unknown else []
    for name, value in options.items():
        problem = type_problem(value, hints.get(name)) if name in hints else None
        if problem:
            problems.append(
                f"--model-arg {name}={shown_value(value)}: the {getattr(cls, 'kind', cls.__name__)} engine takes {problem} for "
                f"{name} ({option_form(name, parameters.get(name), hints.get(name))})"
            )
    return problems


class _Signature:
    """What `cls.__init__` takes, as `construct` checks a plugin's options against it and words each problem:
    the flag that sets them, its options as the user may give them (`shown`: not those the core passes), and
    each accepted form. `positional`: how many parameters the core passes by position (an index builder's
    folder); `injected`: what the core hands the plugin rather than the user, kept where `__init__` names it."""

    def __init__(self, cls: type, label: str, positional: int, injected: Mapping[str, object]) -> None:
        self.label, self.positional = label, positional
        self.flag = FLAGS.get(self.label.split()[0], "option")
        self.parameters, self.hints, self.anything = _init_parameters(cls)
        self.injected = {name: value for name, value in injected.items() if self.parameters.pop(name, None) is not None}
        given_by_core = {"data_path", *list(self.parameters)[:positional]}
        self.shown = {name: p for name, p in self.parameters.items() if name not in given_by_core}
        self.prefix = f"{self.label.split()[-1]}." if self.flag == "--metric-arg" else ""

    @functools.cached_property
    def accepted(self) -> str:
        """Every option the user may give, in its accepted form (only a problem's message says it)."""
        return ", ".join(option_form(n, p, self.hints.get(n)) for n, p in self.shown.items()) or "none"

    def form(self, name: str) -> str:
        return option_form(name, self.parameters.get(name), self.hints.get(name))

    def unknown(self, args: Mapping[str, object]) -> str | None:
        unknown = [] if self.anything else sorted(set(args) - set(self.parameters))
        if not unknown:
            return None
        given = ", ".join(f"{self.prefix}{name}={shown_value(args[name])}" for name in unknown)
        hint = did_you_mean(unknown[0], self.shown, most=3, cutoff=CLOSE) if len(unknown) == 1 else ""
        return f"{self.flag} {given}: {self.label} has no option {', '.join(repr(n) for n in unknown)}{hint} " + (
            f"(accepted: {self.accepted})" if self.shown else "(it takes no options)"
        )

    def mistyped(self, args: Mapping[str, object]) -> str | None:
        for name, value in args.items():
            problem = type_problem(value, self.hints.get(name)) if name in self.shown else None
            if problem:
                return (
                    f"{self.flag} {self.prefix}{name}={shown_value(value)}: {self.label} takes {problem} for {name} "
                    f"({self.form(name)})"
                )
        return None

    def missing(self, args: Mapping[str, object]) -> str | None:
        filled = {*list(self.parameters)[: self.positional], *args, *self.injected}
        missing = [n for n, p in self.shown.items() if p.default is inspect.Parameter.empty and n not in filled]
        if not missing:
            return None
        needed = ", ".join(f"{self.flag} {self.prefix}{self.form(n)}" for n in missing)
        return f"{self.label} needs {needed} (accepted: {self.accepted})"

    def refused(self, args: Mapping[str, object], exc: Exception) -> str:
        """The plugin's own refusal of its options, with those given and the accepted ones."""
        given = " ".join(f"{self.prefix}{k}={shown_value(v)}" for k, v in args.items() if k != "data_path")
        return f"{self.label}: {exc}" + (f" (given {self.flag} {given}; accepted: {self.accepted})" if given else "")


def construct(
    cls: type,
    args: Mapping[str, object],
    label: str,
    positional: tuple[Any, ...] = (),
    injected: Mapping[str, object] | None = None,
) -> Any:
    """`cls(*positional, **args)`, every problem with the options a `ConfigError` naming the flag,
    the plugin, the option and the accepted form. `injected` are what the core hands a plugin rather
    than the user (e.g. the run's `registry`): each is passed when `cls.__init__` names it, and is
    not an option."""
    signature = _Signature(cls, label, len(positional), injected or {})
    problem = signature.unknown(args) or signature.mistyped(args) or signature.missing(args)
    if problem:
        raise ConfigError(problem)
    try:
        return cls(*positional, **args, **signature.injected)
    except (TypeError, ValueError) as exc:
        raise ConfigError(signature.refused(args, exc)) from exc

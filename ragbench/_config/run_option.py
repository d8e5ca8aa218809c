"""A run option declared once, on its group's dataclass field (`option(...)`): its default and type are the field's,
its flag, help, identity and the commands that offer it the declaration's. The command line's options
(ragbench._cli.run.options), run.json's identity lists (ragbench._config.run_config) and the commands' offers are
all read from it."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, field, fields, replace
from typing import Any, Literal

# "always": part of the run's identity (its folder's hash); "never": it does not change results (a --resume may
# give another); "when_given": only when given, so that a run without it keeps the identity it had before it existed
Identity = Literal["always", "never", "when_given"]
# how the command line gives a value: "flag" (a bool; --no-NAME when it is on by default), "int", "float", "text",
# "pairs" (K=V, repeatable), "list" (repeatable), "names" (NAME,NAME in one value)
Shape = Literal["flag", "int", "float", "text", "pairs", "list", "names"]
FIELD_DEFAULT: Any = object()  # a flag's default that is its field's
Offers = Mapping[str, Mapping[str, Any]]  # command -> its changes of a flag's wording (Flag's keywords)
SCORED: Offers = {"score": {}, "reproduce": {}}  # a flag `score` and `reproduce` offer as the run words it


@dataclass(frozen=True)
class Flag:
    """A command-line flag of a run option, as `ragbench --help` words it; a command offering it in a wording of
    its own replaces some of these. `offers`: the commands other than the run, `check` and `estimate` (which
    offer every flag) that offer it, each with its changes of the wording. `after`: where a command lists its
    options unsorted (rescore), this one follows that flag."""

    help: str
    name: str = ""  # "": --NAME of the field (--no-NAME of a flag on by default)
    metavar: str | None = None
    show_default: bool = False
    at_least: int | None = None  # an integer of at least this, refused as the command line is read
    choices: tuple[str, ...] = ()
    bounded: bool = False  # over its bound (ragbench._config.option_bounds) refused as the command line is read
    default: Any = FIELD_DEFAULT
    after: str | None = None
    offers: Offers = field(default_factory=dict)


@dataclass(frozen=True)
class RunOption:
    """One option's declaration: `flags` (none: the run sets it itself, the command line does not; the first is the
    option's own, the others feed the same field), `identity` and `names` (a list given as NAME,NAME)."""

    flags: tuple[Flag, ...] = ()
    identity: Identity = "always"
    names: bool = False


def option(default: Any, *extra: Flag, factory: Any = None, **declared: Any) -> Any:
    """A group's dataclass field of a run option (`default` MISSING: none, the option is required): its flag's
    wording (Flag's keywords: help, metavar ...), `extra` flags that feed the same field (ragbench._cli.run.
    option_values reads them), and RunOption's keywords."""
    wording = {key: declared.pop(key) for key in [*declared] if key in _FLAG_KEYWORDS}
    flags = (Flag(**wording), *extra) if wording else extra
    metadata = {"option": RunOption(flags, **declared)}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def pairs(flag: str, metavar: str, help: str, *extra: Flag, **declared: Any) -> Any:
    """A field of K=V pairs (a dict), its flag repeatable."""
    return option(None, *extra, factory=dict, name=flag, metavar=metavar, help=help, **declared)


_FLAG_KEYWORDS = {f.name for f in fields(Flag)}


@dataclass(frozen=True)
class DeclaredOption:
    """A run option as its group's field declares it: its name, group, default, shape and declaration."""

    name: str
    group: type
    default: Any
    shape: Shape
    option: RunOption


def found(*problems: str | None) -> list[str]:
    """A group's `problems()`: the lines its checks found (None: a check that found nothing)."""
    return [problem for problem in problems if problem is not None]


def group_options(group: type) -> tuple[DeclaredOption, ...]:
    """The options of a group (a dataclass of ragbench._config: RunWhat ... RunLimits), in its fields' order."""
    hints = typing.get_type_hints(group)
    return tuple(_group_option(group, f, hints[f.name]) for f in fields(group))


def _group_option(group: type, f: Field[Any], hint: Any) -> DeclaredOption:
    run_option: RunOption = f.metadata.get("option", RunOption())
    default = f.default_factory() if f.default_factory is not MISSING else f.default
    shape = _shape(hint, run_option)
    if run_option.flags and not run_option.flags[0].name:
        own = ("--no-" if shape == "flag" and default else "--") + f.name.replace("_", "-")
        run_option = replace(run_option, flags=(replace(run_option.flags[0], name=own), *run_option.flags[1:]))
    return DeclaredOption(f.name, group, default, shape, run_option)


def _shape(hint: Any, run_option: RunOption) -> Shape:
    kind = typing.get_origin(hint) or hint
    if kind in (typing.Union, type(int | None)):
        kind = next(arg for arg in typing.get_args(hint) if arg is not type(None))
        kind = typing.get_origin(kind) or kind
    shapes: dict[Any, Shape] = {bool: "flag", int: "int", float: "float", str: "text", dict: "pairs", list: "list"}
    shape = shapes[kind]
    return "names" if run_option.names else shape

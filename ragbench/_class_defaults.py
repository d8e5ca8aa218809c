"""Class-level defaults of the contract classes: read-only mappings, and the one declared value (`System.declares`,
`Metric.declares`) that the old one-attribute-per-fact names still fold into.

A dict written at class level is one object shared by the class, its subclasses and their instances: an
item written into it through one task would change every other. So the bases' defaults are empty read-only
mappings and a subclass's own dict is made read-only when the class is created (`freeze_mappings`, from
`__init_subclass__`): writing into one is a TypeError. A class declares its own mapping; an instance that
needs different values assigns a new one (`self.metric_options = {...}`), which only it sees.

What the core reads of a system or a metric is its `declares`, a frozen dataclass. A plugin written before
that sets each fact by its own name (`retrieves = True`, `self.keys = (...)`): `fold_declared` and
`assign_declared` fold those into `declares`, with a DeprecationWarning once per class, until `REMOVED_IN`.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

EMPTY: Mapping[str, Any] = MappingProxyType({})
WARNED = "_ragbench_warned_old_names"  # set on a class once it has been warned about
REMOVED_IN = "0.3.0"  # the release that stops reading the names the public API deprecated


def freeze_mappings(cls: type, *names: str) -> None:
    """Replace each dict `cls` itself declares under `names` by a read-only copy (its dict values too)."""
    for name in names:
        value = cls.__dict__.get(name)
        if isinstance(value, dict):
            setattr(cls, name, frozen(value))


def frozen(value: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only copy of `value`, its dict values read-only too."""
    return MappingProxyType({key: frozen(item) if isinstance(item, dict) else item for key, item in value.items()})


def fold_declared(cls: type, fields: tuple[str, ...]) -> None:
    """From a contract class's `__init_subclass__`: the declaration fields `cls` sets by their old names as
    plain class attributes go into its `declares` (the attributes stay, for the plugin's own code). One
    defined as a property is an instance's value, read by `with_instance_values`."""
    own = {name: cls.__dict__[name] for name in fields if name in cls.__dict__}
    properties = tuple(name for name, value in own.items() if isinstance(value, property))
    inherited = () if "declares" in cls.__dict__ else getattr(cls, "_declared_by_property", ())
    cls._declared_by_property = (  # type: ignore[attr-defined]
        *(name for name in inherited if name not in own),
        *properties,
    )
    plain = {name: value for name, value in own.items() if name not in properties}
    if plain:
        cls.declares = dataclasses.replace(cls.declares, **plain)  # type: ignore[attr-defined]
    if own:
        warn_old_names(cls, sorted(own))


def assign_declared(instance: Any, name: str, value: Any) -> None:
    """An instance assigning a declaration field by its old name (`self.keys = ...`): its own `declares`
    gets the value too."""
    warn_old_names(type(instance), [name])
    object.__setattr__(instance, "declares", dataclasses.replace(instance.declares, **{name: value}))


def with_instance_values(instance: Any) -> Any:
    """`instance.declares` with the fields its class defines as properties by their old names read of it."""
    own = {name: getattr(instance, name) for name in getattr(type(instance), "_declared_by_property", ())}
    return dataclasses.replace(instance.declares, **own) if own else instance.declares


def warn_old_names(cls: type, names: list[str]) -> None:
    """One DeprecationWarning per class that declares facts by their old names (stacklevel 4: the class
    statement, through `__init_subclass__`, or the assignment, through `__setattr__`)."""
    if cls.__dict__.get(WARNED):
        return
    type.__setattr__(cls, WARNED, True)  # the class owns the mark: a class made anew warns anew
    declaration = type(cls.declares).__name__  # type: ignore[attr-defined]
    warnings.warn(
        f"{cls.__qualname__} declares {', '.join(names)} by name: set `declares = {declaration}(...)` "
        f"instead (docs/writing-plugins.md); the old names are read until ragbench {REMOVED_IN}",
        DeprecationWarning,
        stacklevel=4,
    )


def deprecated_read(owner: Any, name: str, replacement: str) -> None:
    """A DeprecationWarning for reading a member the contract class no longer has (its `__getattr__`)."""
    warnings.warn(
        f"{type(owner).__qualname__}.{name} is deprecated: use {replacement}; it is gone in ragbench {REMOVED_IN}",
        DeprecationWarning,
        stacklevel=3,
    )

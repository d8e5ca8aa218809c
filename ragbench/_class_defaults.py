"""Class-level defaults of the contract classes: read-only mappings, and the one place each fact is declared.

A dict written at class level is one object shared by the class, its subclasses and their instances: an
item written into it through one plugin would change every other. So the declarations' mappings (a
`SystemDeclaration`'s `budget_options`, a `MetricDeclaration`'s `key_specs` ...) are read-only copies
(`frozen`): writing into one is a TypeError. An instance that needs other values assigns a new declaration
(`self.declares = dataclasses.replace(self.declares, ...)`), which only it sees.

What the core reads of a system, a metric or a task is one declared value each (`System.declares`,
`Metric.declares`, `Task.scoring` and `Task.prompting`). A fact set by its own name beside it (`retrieves = True`
on a system, `self.metrics = ...` in a task) would be read by nothing: `refuse_by_name` makes that a TypeError
naming where it goes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

EMPTY: Mapping[str, Any] = MappingProxyType({})


def frozen(value: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only copy of `value`, its dict values read-only too."""
    return MappingProxyType({key: frozen(item) if isinstance(item, dict) else item for key, item in value.items()})


def refuse_by_name(cls: type, names: Iterable[str], attribute: str, instance: bool = False) -> None:
    """A TypeError when contract class `cls` defines (`instance`: its instance assigns) one of the facts it
    declares in the one dataclass value `attribute` (`declares`, `scoring`) by the fact's own name."""
    fields = type(getattr(cls, attribute)).__dataclass_fields__
    named = sorted(name for name in names if name in fields)
    if named:
        kind = type(getattr(cls, attribute)).__name__
        how = (
            f"self.{attribute} = dataclasses.replace(self.{attribute}, ...)"
            if instance
            else f"{attribute} = {kind}(...)"
        )
        raise TypeError(
            f"{cls.__qualname__} sets {', '.join(named)} by name, which nothing reads: "
            f"declare it in `{how}` (docs/writing-plugins.md)"
        )


class RefusesDeclaredByName:
    """The base of a contract class whose facts are its `declares` (`System`, `Metric`): a subclass that defines
    one of them by its own name, or an instance that assigns one, is a TypeError (`refuse_by_name`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        refuse_by_name(cls, vars(cls), "declares")

    def __setattr__(self, name: str, value: Any) -> None:
        refuse_by_name(type(self), (name,), "declares", instance=True)
        super().__setattr__(name, value)

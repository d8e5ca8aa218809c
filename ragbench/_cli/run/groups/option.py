"""One command-line option of a run, the RunConfig fields it sets, and the base of the groups that declare them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import click

# a click command function, as option decorators hand it back with their options
Command = TypeVar("Command", bound=Callable[..., Any])


@dataclass(frozen=True)
class Option:
    """A click option (`decls` and `settings`, as click.option takes them) and the RunConfig fields its value
    becomes part of."""

    decls: tuple[str, ...]
    fields: tuple[str, ...]
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.decls[0]

    def decorator(self, changes: Mapping[str, Any]) -> Callable[[Command], Command]:
        """The click option, `changes` over its settings (a command's own help, or default)."""
        decorate: Callable[[Command], Command] = click.option(*self.decls, **{**self.settings, **changes})
        return decorate


class OptionGroup(ABC):
    """The options of one group of a run's options (`OPTIONS`, in the order the help shows them under `TITLE`) and
    `of`, the group's value (ragbench._values.run_groups) from click's parsed values: a value of an option the
    command does not offer is the option's default."""

    TITLE: ClassVar[str]
    OPTIONS: ClassVar[tuple[Option, ...]]

    @classmethod
    def option(cls, name: str) -> Option:
        found = [option for option in cls.OPTIONS if option.name == name]
        if not found:
            raise KeyError(f"{cls.__name__} has no option {name}")
        return found[0]

    @classmethod
    @abstractmethod
    def of(cls, values: Mapping[str, Any]) -> Any:
        """The group's value from click's parsed values (ConfigError: a malformed one)."""

    @classmethod
    def config_fields(cls, values: Mapping[str, Any], names: tuple[str, ...] = ()) -> dict[str, Any]:
        """The RunConfig fields the options `names` set (none named: every option of the group), from click's
        parsed values."""
        group = cls.of(values)
        options = [cls.option(name) for name in names] if names else cls.OPTIONS
        return {key: getattr(group, key) for option in options for key in option.fields}

"""What a command offers of the groups (all of a group's options, or some, in a wording of its own) and the RunConfig
fields they give: `ragbench`, `check` and `estimate` offer every group whole."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...._values.run_config import RunConfig
from .judging import JudgingOptions
from .limits import LimitOptions
from .models import ModelOptions
from .option import Command, Option, OptionGroup
from .output import OutputOptions
from .retrieval import RetrievalOptions
from .what_to_run import WhatToRun

# a run's groups, in the order `ragbench --help` shows them
RUN_GROUPS: tuple[type[OptionGroup], ...] = (
    WhatToRun,
    ModelOptions,
    RetrievalOptions,
    JudgingOptions,
    OutputOptions,
    LimitOptions,
)


@dataclass(frozen=True)
class Offer:
    """The options of `group` a command offers: every one, or those `names`d; `changes`: an option's settings as
    this command words them (its help, its default), by option name."""

    group: type[OptionGroup]
    names: tuple[str, ...] = ()
    changes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def options(self) -> tuple[Option, ...]:
        return tuple(map(self.group.option, self.names)) if self.names else self.group.OPTIONS

    def config_fields(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The RunConfig fields of the offered options, from click's parsed values."""
        return self.group.config_fields(values, self.names)


def with_offers(*offers: Offer) -> Callable[[Command], Command]:
    """The offered options on a command function, in the order given."""

    def decorate(func: Command) -> Command:
        options = [(option, offer.changes.get(option.name, {})) for offer in offers for option in offer.options()]
        for option, changes in reversed(options):
            func = option.decorator(changes)(func)
        return func

    return decorate


def config_fields(values: Mapping[str, Any], offers: tuple[Offer, ...]) -> dict[str, Any]:
    """The RunConfig fields of what the offers offer (ConfigError: a malformed option)."""
    return {key: value for offer in offers for key, value in offer.config_fields(values).items()}


RUN_OFFERS = tuple(Offer(group) for group in RUN_GROUPS)
with_run_options = with_offers(*RUN_OFFERS)


def run_config_of(values: Mapping[str, Any]) -> RunConfig:
    """The RunConfig of a run's command line (`ragbench`, `check`, `estimate`)."""
    return RunConfig.of(**config_fields(values, RUN_OFFERS))

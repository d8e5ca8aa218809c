"""A run's command-line options, each made from its declaration on its group's field (ragbench._config.run_option):
its flags as click options, and what each command offers of them. `ragbench`, `check` and `estimate` offer every
flag; `score`, `reproduce` and `rescore` those declared as theirs, in their own wording where it differs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import click

from ..._config.judging import RunJudging
from ..._config.limits import RunLimits
from ..._config.models import RunModels
from ..._config.option_bounds import too_many
from ..._config.output import RunOutput
from ..._config.retrieval import RunRetrieval
from ..._config.run_option import FIELD_DEFAULT, DeclaredOption, Flag, group_options
from ..._config.what import RunWhat

# a click command function, as option decorators hand it back with their options
Command = TypeVar("Command", bound=Callable[..., Any])

# a run's groups, in the order `ragbench --help` shows them, under these titles
RUN_GROUPS: dict[type, str] = {
    RunWhat: "What to run",
    RunModels: "Model and engine",
    RunRetrieval: "Retrieval",
    RunJudging: "Judging and metrics",
    RunOutput: "Output and resume",
    RunLimits: "Speed, limits and failures",
}
FLAGGED_OPTIONS = tuple(option for group in RUN_GROUPS for option in group_options(group) if option.option.flags)
EVERY = "run"  # the commands that offer every flag: `ragbench`, `check`, `estimate`


@dataclass(frozen=True)
class Offered:
    """A flag of a run option as a command offers it (`flag`: in the command's wording; `own`: the option's own
    flag, not one of those that feed its field too, --include-path and --base-url)."""

    option: DeclaredOption
    flag: Flag
    own: bool

    @property
    def default(self) -> Any:
        """The default the command's wording states: rescore's "(default: the run's)" is None, not the field's."""
        return self.option.default if self.flag.default is FIELD_DEFAULT else self.flag.default

    def decorator(self) -> Callable[[Command], Command]:
        """The click option."""
        flag, shape = self.flag, self.option.shape if self.own else "list"
        settings: dict[str, Any] = {"help": flag.help}
        if shape == "flag":
            settings["is_flag"] = True
        elif shape in ("pairs", "list"):
            settings["multiple"] = True
        else:
            settings["default"] = None if shape == "names" else self.default
            settings.update(_typed(shape, flag))
        if flag.metavar:
            settings["metavar"] = flag.metavar
        if flag.show_default:
            settings["show_default"] = True
        if flag.bounded:
            settings["callback"] = _at_most(self.option.name)
        decorate: Callable[[Command], Command] = click.option(flag.name, **settings)
        return decorate


def _typed(shape: str, flag: Flag) -> Mapping[str, Any]:
    if flag.choices:
        return {"type": click.Choice(list(flag.choices))}
    if shape == "int":
        return {"type": int if flag.at_least is None else click.IntRange(min=flag.at_least)}
    return {"type": float} if shape == "float" else {}


def _at_most(name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A value over its bound refused as the command line is read (ragbench._config.option_bounds): a run
    would make as many of something for every example."""

    def refuse(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if problem := too_many(param.opts[0], name, value):
            raise click.UsageError(problem, ctx)
        return value

    return refuse


def offered(command: str) -> tuple[Offered, ...]:
    """The flags `command` offers, each in its wording, in the groups' order and each group's."""
    found = [
        Offered(option, flag if command == EVERY else replace(flag, **flag.offers[command]), n == 0)
        for option in FLAGGED_OPTIONS
        for n, flag in enumerate(option.option.flags)
        if command == EVERY or command in flag.offers
    ]
    for item in [item for item in found if item.flag.after]:
        found.remove(item)
        found.insert(1 + [other.flag.name for other in found].index(str(item.flag.after)), item)
    return tuple(found)


def with_offers(command: str) -> Callable[[Command], Command]:
    """The options `command` offers on its function, in their order."""

    def decorate(func: Command) -> Command:
        for item in reversed(offered(command)):
            func = item.decorator()(func)
        return func

    return decorate


with_run_options = with_offers(EVERY)


def help_groups() -> dict[str, tuple[str, ...]]:
    """Each group's title and its flags, in `ragbench --help`'s order."""
    return {
        title: tuple(item.flag.name for item in offered(EVERY) if item.option.group is group)
        for group, title in RUN_GROUPS.items()
    }

"""The run's options in `ragbench --help` (and `check`, `estimate`, `score`, `reproduce`) shown by topic (cloup's
option groups) instead of one list of about fifty: a topic for each group of options (options.py), its options in
the group's order, then the trackers'."""

from __future__ import annotations

import click
import cloup

from ..._config.what import RunWhat
from ..plugin_commands import PluginCommandGroup
from .options import RUN_GROUPS, Command, help_groups
from .trackers import TRACKER_KEYS

RUN_HELP_GROUPS: dict[str, tuple[str, ...]] = {
    **help_groups(),
    "Tracking": tuple("--" + key.replace("_", "-") for key in TRACKER_KEYS),
}
RUN_HELP_GROUPS[RUN_GROUPS[RunWhat]] += ("--replay", "--estimate")  # the root command's own (main.py)
# the options of no topic (the root's --version, check's --no-model, estimate's, score's and reproduce's own): shown
# last, with --help, as "Other options"
UNGROUPED = (
    "--version",
    "--no-model",
    "--pilot",
    "--precision",
    "--json",
    "--task",
    "--predictions",
    "--traces",
    "--trace-format",
    "--match-attribute",
    "--list",
)


def with_help_groups(func: Command) -> Command:
    """Puts each option already declared on the command function in its RUN_HELP_GROUPS group, the groups and
    their options in that order (the options' parsing does not depend on it). Goes above the options'
    decorators, on a command whose class shows option groups (cloup's)."""
    groups = {title: cloup.OptionGroup(title) for title in RUN_HELP_GROUPS}
    place = {name: (title, n) for title, names in RUN_HELP_GROUPS.items() for n, name in enumerate(names)}
    order = list(RUN_HELP_GROUPS)
    params: list[click.Parameter] = getattr(func, "__click_params__", [])
    for param in params:
        if isinstance(param, click.Option) and param.opts[0] in place:
            param.group = groups[place[param.opts[0]][0]]  # type: ignore[attr-defined]  # cloup's marker

    def position(param: click.Parameter) -> tuple[int, int]:
        title, n = place.get(param.opts[0], ("", 0))
        return (order.index(title), n) if title else (len(order), 0)

    # click builds the command from __click_params__ reversed (the decorators run bottom-up)
    params.sort(key=position, reverse=True)
    return func


class GroupedHelpGroup(cloup.OptionGroupMixin, PluginCommandGroup):
    """The `ragbench` group, its options shown by group (cloup's help formatter)."""

    context_class = cloup.Context

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.format_params(ctx, formatter)
        self.format_commands(ctx, formatter)

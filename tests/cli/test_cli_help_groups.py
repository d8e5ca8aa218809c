"""`ragbench --help`, and the help of the commands that take a run's options (`check`, `estimate`, `score`,
`reproduce`), show them by topic: every option once, under the group ragbench._cli.run.help_groups names for it (its
option group's); an option added without a group fails here."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from ragbench._cli.main import check_command, main, score_command
from ragbench._cli.run.estimate import estimate_command
from ragbench._cli.run.help_groups import RUN_HELP_GROUPS, UNGROUPED
from ragbench._cli.run_folder_commands import reproduce_command

OPTION_LINE = re.compile(r"^  (?:-\w, )?(--[\w-]+)")


def sections(help_text: str) -> dict[str, list[str]]:
    """The option names under each heading of a help page (`Commands:` and the description left out)."""
    out: dict[str, list[str]] = {}
    heading = None
    for line in help_text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            heading = line[:-1]
            out[heading] = []
        elif heading is not None and (match := OPTION_LINE.match(line)):
            out[heading].append(match.group(1))
    out.pop("Commands", None)
    return out


COMMANDS = [main, check_command, estimate_command, score_command, reproduce_command]


@pytest.mark.parametrize("command", COMMANDS, ids=["ragbench", "check", "estimate", "score", "reproduce"])
def test_every_option_is_shown_once_under_its_group(command: click.Command) -> None:
    args = ["--help"] if command is main else [str(command.name), "--help"]
    shown = sections(CliRunner().invoke(main, args).output)
    options = [p.opts[0] for p in command.params if isinstance(p, click.Option)]
    names = [name for names in shown.values() for name in names]
    assert sorted(names) == sorted([*options, "--help"])  # each option once, and nothing else
    expected = {
        title: offered
        for title, grouped in RUN_HELP_GROUPS.items()
        if (offered := [name for name in grouped if name in options])
    }
    assert list(shown) == [*expected, "Other options"]  # the groups in their order, then the rest
    assert {title: shown[title] for title in expected} == expected
    assert set(shown["Other options"]) <= {*UNGROUPED, "--help"}, "an option without a group: add it to one"


def test_the_groups_name_only_real_options_each_once() -> None:
    named = [name for names in RUN_HELP_GROUPS.values() for name in names]
    options = {p.opts[0] for p in main.params if isinstance(p, click.Option)}
    assert len(named) == len(set(named))
    assert set(named) <= options  # a renamed or removed option leaves no stale name behind

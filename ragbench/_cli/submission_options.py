"""The options of every command that writes a track's submission from a finished run (`ragbench export dragun`,
`export trec-rag`, a plugin's), declared once: `--output`, `--run-id`, `--team-id` and `--overwrite`, each with
the one meaning it has in all of them. Public as ragbench.api.run.submission_options."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

Command = TypeVar("Command", bound=Callable[..., object])


def submission_options(default_output: str) -> Callable[[Command], Command]:
    """A click decorator adding the four options, passed to the command as `output` (None: `default_output`
    beside RUN, which the command names), `run_id` (None: the run folder's name), `team_id` and `overwrite`.
    The command checks the output file with `check_output(path, overwrite, ...)` and writes it with
    `write_atomically`."""
    options = (
        click.option("--output", default=None, help=f"the file to write (default: {default_output} beside RUN)"),
        click.option(
            "--run-id",
            default=None,
            help="the run's name in the submission, its run_id / run_tag (default: the run folder's name)",
        ),
        click.option(
            "--team-id", default="ragbench", show_default=True, help="the submission's team, where its format has one"
        ),
        click.option("--overwrite", is_flag=True, help="replace an earlier export at --output"),
    )

    def add(command: Command) -> Command:
        for option in reversed(options):  # click lists a command's options in the order they are written above it
            command = option(command)
        return command

    return add

"""`ragbench trivia-stats`: a command this plugin adds to the ragbench command line (the
`ragbench_cli_commands` hook in plugin.py). Keep such modules light: click only at import time."""

from __future__ import annotations

import click


@click.command("trivia-stats")
@click.option("--data", default=None, help="a trivia_tf JSONL file (default: the copy shipped with the plugin)")
def trivia_stats(data: str | None) -> None:
    """Count the true and false statements of the trivia_tf data."""
    from ragbench.api import Example
    from ragbench.api.run import config_errors_exit

    from .task import TriviaTF

    with config_errors_exit():
        task = TriviaTF(data_path=data)
        task.prepare()
        truths = [e.gold["truth"] for e in task.examples() if isinstance(e, Example)]
    click.echo(f"{len(truths)} statements: {sum(truths)} true, {len(truths) - sum(truths)} false")

"""The one shape of the benchmarks' corpus commands (`ragbench index omnieval-corpus`, `kilt-corpus`,
`multihop-rag-corpus`): a source option, --out, the command's own options, --overwrite."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def corpus_command(
    name: str, source: str, source_help: str, out_help: str, *options: Decorator
) -> Callable[[Callable[..., None]], click.Command]:
    """The click command `name`: the option `source` (the function's `source`), --out, the command's own
    `options`, then --overwrite, in that order in its --help."""

    def made(function: Callable[..., None]) -> click.Command:
        decorators: list[Decorator] = [
            click.option(source, "source", required=True, help=source_help),
            click.option("--out", required=True, help=out_help),
            *options,
            click.option("--overwrite", is_flag=True, help="replace an existing --out file"),
        ]
        for decorator in reversed(decorators):  # the last applied first, as stacked decorators are
            function = decorator(function)
        return click.command(name)(function)

    return made

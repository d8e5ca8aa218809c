"""The registry of one `ragbench` command: the installed plugins, discovered once, on first need, and kept in
click's context (`ctx.meta`, which a command shares with the group that runs it). The command passes it to
what loads a component (the run, rescore, an index build, the viewer); nothing below keeps one of its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from .._registry import Registry

_KEY = "ragbench.registry"


def command_registry(ctx: click.Context | None = None) -> Registry:
    """The running command's registry (of `ctx`, else the current click context's), made on first use."""
    meta = (ctx or click.get_current_context()).meta
    if _KEY not in meta:
        from .._registry import installed_registry

        meta[_KEY] = installed_registry()
    registry: Registry = meta[_KEY]
    return registry

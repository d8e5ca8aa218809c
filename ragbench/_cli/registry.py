"""The registry of one `ragbench` command: the installed plugins, discovered once, on first need, and kept in
click's context (`ctx.meta`, which a command shares with the group that runs it). The command passes it to
what loads a component (the run, rescore, an index build, the viewer); nothing below keeps one of its own. A test
that runs the command in its process gives it a registry of its own as click's `obj`
(`CliRunner().invoke(cli, args, obj=registry)`: a plugin that is not installed, docs/testing-plugins.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from .._registry import Registry

_KEY = "ragbench.registry"


def command_registry(ctx: click.Context | None = None) -> Registry:
    """The running command's registry (of `ctx`, else the current click context's): the one its caller gave as
    click's `obj`, else the installed plugins', made on first use."""
    ctx = ctx or click.get_current_context()
    meta = ctx.meta
    if _KEY not in meta:
        from .._registry import Registry, installed_registry

        meta[_KEY] = ctx.obj if isinstance(ctx.obj, Registry) else installed_registry()
    registry: Registry = meta[_KEY]
    return registry

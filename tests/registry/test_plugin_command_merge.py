"""The commands plugins add merge into the `ragbench` command group (ragbench._cli.plugin_commands.PluginCommandGroup):
a new name is added, a group named like a built-in one adds its commands to it, a name taken is reported and
skipped. A unit on a group of its own: the `ragbench` command merges once per process, so a test's plugins cannot
join it without staying there. The plugins and their registry: test_plugin_hooks.py."""

from __future__ import annotations

import click
from click.testing import CliRunner
from test_plugin_hooks import PROVIDER, registry  # noqa: F401 (registry: a fixture)

from ragbench import _registry
from ragbench._cli import plugin_commands as cli_plugins


def test_plugin_commands_join_the_command_line(registry, monkeypatch):
    @click.group("index")
    def index() -> None:
        """The built-in group."""

    @index.command("build")
    def build() -> None:
        click.echo("built")

    @click.group(cls=cli_plugins.PluginCommandGroup)
    def main() -> None:
        pass

    main.add_command(index)

    @main.command("list")
    def listing() -> None:
        click.echo("built-in list")

    monkeypatch.setattr(_registry, "installed_registry", lambda: registry)
    runner = CliRunner()
    assert runner.invoke(main, ["hello"]).output == "hello from a plugin\n"
    assert runner.invoke(main, ["index", "toy-corpus"]).output == "toy corpus built\n"
    assert runner.invoke(main, ["index", "build"]).output == "built\n"  # built-ins stay
    assert runner.invoke(main, ["list"]).output == "built-in list\n"
    assert ("list", PROVIDER, "command 'ragbench list' already exists; this one is ignored") in [
        (f.plugin, f.provider, f.error) for f in registry.failures
    ]

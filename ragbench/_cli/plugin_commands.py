"""The commands plugins add to the `ragbench` command line through the `ragbench_cli_commands` hook.

They are merged into the command tree the first time click looks a command up (so a run started with
options alone never discovers them): a new name is added; a group named like an existing group adds
its commands to it (`index`, or a group another plugin added); a name already taken is reported with
the other plugin failures (`ragbench list`) and skipped. Commands (built-in or a plugin's) end the same
way through `config_errors_exit` and `exit_if_skipped`.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click

from .. import _stop_signals
from .._errors import EXIT_CONFIG, EXIT_INCOMPLETE, ConfigError
from .._stop_signals import exit_if_stopped, stopped_by, stopped_starting
from .._values.urls import redact_urls
from .outcomes import config_error, environment_error, exit_if_exhausted
from .registry import command_registry

_MERGED = "ragbench.plugin_commands_merged"  # in ctx.meta: this command's registry has the merge failures


class PluginCommandGroup(click.Group):
    """A click group whose commands are its own followed by those of the installed plugins."""

    _plugins_merged = False
    _merge_failures: tuple[Any, ...] = ()  # the commands that could not be merged (PluginFailure)

    def _merge_plugins(self, ctx: click.Context) -> None:
        """Merge the plugins' commands once per process, and give each command's registry the failures."""
        if ctx.meta.get(_MERGED):
            return
        ctx.meta[_MERGED] = True
        registry = command_registry(ctx)
        if not self._plugins_merged:
            self._plugins_merged = True
            from .._catalog import PluginFailure

            self._merge_failures = tuple(
                PluginFailure(getattr(command, "name", "?") or "?", provider, problem)
                for command, provider in registry.cli_commands
                for problem in [merge_command(self, command)]
                if problem is not None
            )
        registry.failures.extend(self._merge_failures)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._merge_plugins(ctx)
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        self._merge_plugins(ctx)
        return super().get_command(ctx, cmd_name)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """As click's, but a usage error (an unknown option, a value click cannot convert) ends in one
        line and exit 2, like every other configuration error (a ConfigError no command handled too), instead
        of click's usage block; and a stop signal no command handled in one line and 128 + the signal, instead
        of `Aborted!` and exit 1; an OS error no command handled (a FIFO where a file is read, a full disk) in
        one line and exit 1."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            command = exc.ctx.command_path if exc.ctx is not None else "ragbench"
            click.echo(f"ragbench: error: {exc.format_message()} (`{command} --help` lists the options)", err=True)
            sys.exit(EXIT_CONFIG)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort as exc:
            if not isinstance(exc.__context__, KeyboardInterrupt):
                click.echo("Aborted!", err=True)
                sys.exit(1)
            exit_if_stopped(exc.__context__, stopped_message(exc.__context__))
        except (KeyboardInterrupt, RuntimeError) as exc:  # raised before click's own handling begins (its
            # shell-completion check), or wrapped by Python 3.11 as a class was made
            exit_if_stopped(exc, stopped_message(exc))
            exit_if_exhausted(exc)
            raise
        except (MemoryError, ImportError) as exc:  # an import that could not map its library for want of memory
            exit_if_exhausted(exc)
            raise
        except OSError as exc:  # a fault of the machine or of a file that no command took charge of: one line
            environment_error(exc)
        except ConfigError as exc:  # a configuration error no command took charge of: one line, exit 2
            config_error(exc)


def stopped_message(exc: BaseException) -> Callable[[int], str]:
    """The line of a stop signal no command took charge of: in click's own steps before a command began
    (nothing was written), or during a command that stops where it stands."""
    if not command_had_begun(exc):
        return stopped_starting
    return lambda signum: f"ragbench: {stopped_by(signum)} before the command finished: run it again\n"


def command_had_begun(exc: BaseException) -> bool:
    """Whether a command's own code had run when `exc` was raised: its traceback goes from click's
    `Context.invoke` into the callback it calls, and on into code that is not click's (its decorators, as
    `pass_context`'s wrapper, are click's; the signal handler's own frames are no command's). A callback that is
    not a plain function counts as begun."""
    click_folder = os.path.dirname(click.__file__)
    callback = entered = None
    frames = exc.__traceback__
    while frames is not None:
        code = frames.tb_frame.f_code
        if code is click.Context.invoke.__code__:
            callback = frames.tb_frame.f_locals.get("callback")
            if not hasattr(callback, "__code__"):
                return True
        elif callback is not None and code is callback.__code__:
            entered = True
        if entered and not code.co_filename.startswith(click_folder) and code.co_filename != _stop_signals.__file__:
            return True
        frames = frames.tb_next
    return False


def merge_command(group: click.Group, command: Any, path: str = "ragbench") -> str | None:
    """Add `command` to `group` (merging a group into a same-named one); a problem as one line, else None."""
    if not isinstance(command, click.Command) or not command.name:
        return f"ragbench_cli_commands returned {command!r}, not a named click command"
    existing = group.commands.get(command.name)
    if existing is None:
        group.add_command(command)
        return None
    if isinstance(existing, click.Group) and isinstance(command, click.Group):
        problems = [merge_command(existing, sub, f"{path} {command.name}") for sub in command.commands.values()]
        return "; ".join(p for p in problems if p) or None
    return f"command '{path} {command.name}' already exists; this one is ignored"


@contextmanager
def config_errors_exit(output_option: str = "its output") -> Iterator[None]:
    """For a command's body: a ConfigError is printed as one line and exits EXIT_CONFIG; an OS or SQLite
    error (a full disk, a read-only folder) is one line naming what, where and the fix, exit 1
    (`output_option`: the option that points the command's writing elsewhere)."""
    try:
        yield
    except ConfigError as exc:
        click.echo(f"ragbench: error: {redact_urls(str(exc))}", err=True)  # a credential a URL holds never shown
        sys.exit(EXIT_CONFIG)
    except (OSError, sqlite3.Error) as exc:
        environment_error(exc, options=output_option)


def echo_lines_of(make: Callable[[], Iterable[str]], output_option: str = "its output") -> None:
    """For a command that makes lines to print (an export saying what it wrote): `make()` under
    `config_errors_exit`, then each line it made."""
    with config_errors_exit(output_option):
        lines = list(make())
    for line in lines:
        click.echo(line)


def exit_if_skipped(errors: Sequence[str | Exception], each: str, summary: str) -> None:
    """Report what a command skipped (`each` before every error, then `summary`) and exit EXIT_INCOMPLETE."""
    if errors:
        for error in errors:
            click.echo(f"ragbench: {each}: {error}", err=True)
        click.echo(f"ragbench: {summary}", err=True)
        sys.exit(EXIT_INCOMPLETE)

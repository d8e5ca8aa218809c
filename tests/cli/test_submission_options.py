"""Every command that writes a track's submission from a finished run (`ragbench export dragun`, `export
trec-rag`) offers --output, --run-id, --team-id and --overwrite declared once (ragbench.api.run's
`submission_options`), each with the same meaning; a plugin's command takes them the same way."""

from __future__ import annotations

from typing import Any

import click
import pytest
from click.testing import CliRunner

from ragbench.api.run import submission_options
from ragbench.testing import cli

SUBMISSION_EXPORTS = {"dragun": "RUN__TASK", "trec-rag": "RUN__TASK.jsonl"}  # each with its default file name
FOUR = ("output", "run_id", "team_id", "overwrite")


def export_command(name: str) -> click.Command:
    ctx = click.Context(cli)
    group = cli.get_command(ctx, "export")
    assert isinstance(group, click.Group)
    command = group.get_command(ctx, name)
    assert command is not None
    return command


def meaning(command: click.Command) -> dict[str, Any]:
    """The four options as a user meets them: flags, default, whether a flag, shown default and help."""
    options = {p.name: p for p in command.params if isinstance(p, click.Option) and p.name in FOUR}
    return {
        name: (tuple(option.opts), option.default, option.is_flag, option.show_default, option.help)
        for name, option in options.items()
    }


def test_each_submission_export_offers_the_four_options_with_one_meaning():
    seen = {name: meaning(export_command(name)) for name in SUBMISSION_EXPORTS}
    for name, default in SUBMISSION_EXPORTS.items():
        assert set(seen[name]) == set(FOUR), name
        assert seen[name]["output"][-1] == f"the file to write (default: {default} beside RUN)"
    dragun, trec_rag = (seen[name] for name in SUBMISSION_EXPORTS)
    assert {k: v for k, v in dragun.items() if k != "output"} == {k: v for k, v in trec_rag.items() if k != "output"}
    assert dragun["output"][:-1] == trec_rag["output"][:-1]
    assert dragun["team_id"][1] == "ragbench" and dragun["run_id"][1] is None and dragun["overwrite"][2] is True


@pytest.mark.parametrize("name", SUBMISSION_EXPORTS)
def test_the_help_lists_them_after_the_task_in_one_order(name):
    text = CliRunner().invoke(cli, ["export", name, "--help"]).output
    where = [text.index(flag) for flag in ("--task", "--output", "--run-id", "--team-id", "--overwrite")]
    assert where == sorted(where)
    words = " ".join(text.split())  # click wraps the help's lines
    assert "the run's name in the submission, its run_id / run_tag (default: the run folder's name)" in words


def test_a_plugins_command_takes_the_same_options_through_the_public_api():
    @click.command("toy")
    @click.argument("run_dir", metavar="RUN")
    @submission_options("RUN__toy.json")
    def toy(run_dir: str, output: str | None, run_id: str | None, team_id: str, overwrite: bool) -> None:
        click.echo(f"{run_dir} {output} {run_id} {team_id} {overwrite}")

    assert {k: v for k, v in meaning(toy).items() if k != "output"} == {
        k: v for k, v in meaning(export_command("dragun")).items() if k != "output"
    }
    runner = CliRunner()
    assert runner.invoke(toy, ["r"]).output == "r None None ragbench False\n"
    done = runner.invoke(toy, ["r", "--output", "o", "--run-id", "x", "--team-id", "t", "--overwrite"])
    assert done.output == "r o x t True\n"

"""A plugin package that ships a YAML task (and a prompt style of its own) as package data, pip-installed
offline into a private --target folder as a user would install it: its task is listed, checked and run
like any other, through the `ragbench_catalog` hook, with no Python for the task itself."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from support.command_zygote import Zygote
from support.helpers import pip_install_args, plugin_pyproject, write_dedented

PROVIDER = "ragbench-yaml-example"
RECORDS = [
    {
        "id": "c1",
        "question": "What is the capital of France?",
        "golden_answers": ["Paris"],
        "metadata": {"continent": "Europe"},
    },
    {
        "id": "c2",
        "question": "What is the capital of Japan?",
        "golden_answers": ["Tokyo"],
        "metadata": {"continent": "Asia"},
    },
    {
        "id": "c3",
        "question": "What is the capital of Peru?",
        "golden_answers": ["Lima"],
        "metadata": {"continent": "America"},
    },
]
TASK = """\
task: capitals
description: Three capital cities, shipped with the plugin
groups: [geography]
data: {path: data/capitals.jsonl, format: flashrag}
fields:
  slices: {continent: metadata.continent}
prompt: {style: shouting}
postprocess: [strip, lower]
metrics: [em, {name: match_normalized}]
system_args: {max_tokens: 6}
"""
STYLE = """\
from dataclasses import dataclass, replace

from ragbench.api.yaml_tasks import YamlPrompting, YamlTask


@dataclass(frozen=True)
class ShoutingPrompting(YamlPrompting):
    renders_templates = False
    prefix: str = "QUESTION"

    def build_prompt(self, example, docs=None, question=None, **options):
        return f"{self.prefix}: {(question or example.question).upper()}\\nANSWER:"


class Shouting(YamlTask):
    \"\"\"Asks in capitals, with a prefix set by --task-arg prefix=...\"\"\"

    prompting_class = ShoutingPrompting

    def __init__(self, data_path=None, prefix: str = "QUESTION") -> None:
        super().__init__(data_path)
        self.args["prefix"] = prefix
        self.prompting = replace(self.prompting, prefix=prefix)
"""
HOOK = """\
from ragbench.api import hookimpl


@hookimpl
def ragbench_catalog():
    return {"tasks": {"capitals": {"yaml": "ragbench_yaml_example:tasks/capitals.yaml"}},
            "prompt_styles": {"shouting": {"target": "ragbench_yaml_example.style:Shouting",
                                           "description": "questions in capitals"}}}
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("yaml_plugin")
    source = root / "src"
    write_dedented(
        source / "pyproject.toml",
        plugin_pyproject(
            PROVIDER,
            {"yaml_example": "ragbench_yaml_example.hooks"},
            "ragbench_yaml_example",
            ("tasks/*.yaml", "tasks/data/*.jsonl"),
        ),
    )
    package = source / "ragbench_yaml_example"
    write_dedented(package / "__init__.py", "")
    write_dedented(package / "hooks.py", HOOK)
    write_dedented(package / "style.py", STYLE)
    write_dedented(package / "tasks" / "capitals.yaml", TASK)
    write_dedented(package / "tasks" / "data" / "capitals.jsonl", "".join(json.dumps(r) + "\n" for r in RECORDS))
    target = root / "site"
    done = subprocess.run(
        pip_install_args(source, target),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (target / "ragbench_yaml_example" / "tasks" / "capitals.yaml").is_file()  # shipped as package data
    return target


def _ragbench(zygote: Zygote, args: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess:
    """`ragbench ARGS` with the plugin's site folder on PYTHONPATH, as a fork of the tests' command zygote (its
    plugins are found on the command's own sys.path, as in a fresh interpreter)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return zygote.run(args, env, cwd=cwd, timeout=120)


def test_the_plugin_task_and_style_are_listed_with_their_provider(site, tmp_path, ragbench_zygote):
    done = _ragbench(ragbench_zygote, ["list", "tasks"], site, tmp_path)
    assert done.returncode == 0 and "failed to load" not in done.stderr, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line.startswith("  ")}
    assert rows["capitals"].endswith(f"[{PROVIDER}]") and "Three capital cities" in rows["capitals"]
    assert rows["shouting"].endswith(f"[{PROVIDER}]")
    metrics = _ragbench(ragbench_zygote, ["list", "metrics", "--verbose"], site, tmp_path).stdout
    em_fits = metrics.split("\n  em ", 1)[1].splitlines()[1]
    assert "capitals" in em_fits  # its gold kinds are known: metrics see that they fit


def test_the_plugin_task_runs_by_its_group_with_its_style_options(site, tmp_path, ragbench_zygote):
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps(
            [
                {"pattern": "ASK: WHAT IS THE CAPITAL OF FRANCE", "response": " PARIS "},
                {"pattern": "ASK: WHAT IS THE CAPITAL OF JAPAN", "response": "Kyoto"},
                {"pattern": "^ASK: ", "response": "Lima\n"},
            ]
        )
    )
    args = [
        "--tasks",
        "geography",
        "--task-arg",
        "prefix=ASK",
        "--model",
        f"scripted:{rules}",
        "--system",
        "closed_book",
    ]
    checked = _ragbench(ragbench_zygote, ["check", *args, "--no-model"], site, tmp_path)
    assert checked.returncode == 0, checked.stderr
    done = _ragbench(ragbench_zygote, [*args, "--no-progress", "--output", str(tmp_path / "r")], site, tmp_path)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert results["results"]["capitals"] == {"em": 2 / 3, "match_normalized": 2 / 3}
    assert results["config"]["task_configs"]["capitals"]["prefix"] == "ASK"
    assert results["details"]["capitals"]["em"]["slices"]["continent"]["Asia"]["value"] == 0.0
    first = json.loads((tmp_path / "r" / "samples" / "capitals.jsonl").read_text().splitlines()[0])
    assert first["trace"][-1]["request"]["sampling"]["max_tokens"] == 6
    assert first["prediction"]["answer"] == "paris"


def test_an_unknown_style_option_is_refused_by_name(site, tmp_path, ragbench_zygote):
    done = _ragbench(
        ragbench_zygote, ["--tasks", "capitals", "--task-arg", "prefx=ASK", "--model", "scripted:echo"], site, tmp_path
    )
    assert done.returncode == 2 and "no selected task accepts 'prefx'" in done.stderr, done.stderr

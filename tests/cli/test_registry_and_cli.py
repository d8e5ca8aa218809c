"""Discovery through entry points, lazy loading, aliases and groups, and the light CLI."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ragbench.api import ConfigError
from ragbench.testing import Registry, installed_registry
from support.helpers import cli_here


def test_builtins_register_through_the_entry_point_group_with_their_provider():
    registry = installed_registry()
    assert {"popqa", "pubhealth", "arc_challenge", "demo"} <= set(registry.names("tasks"))
    assert {"closed_book", "vanilla", "recorded"} <= set(registry.names("systems"))
    assert {"hf", "vllm", "openai", "replay", "scripted"} <= set(registry.names("engines"))
    assert registry.entry("systems", "vanilla").provider == "ragbench"
    assert registry.failures == []


def test_aliases_and_groups_resolve():
    registry = installed_registry()
    assert registry.entry("tasks", "arc_c").name == "arc_challenge"
    assert registry.expand_tasks(["selfrag_suite", "popqa", "demo"]) == [
        "pubhealth",
        "arc_challenge",
        "popqa",
        "asqa",
        "demo",
    ]


def test_unknown_names_suggest_the_nearest():
    with pytest.raises(ConfigError, match=r"unknown metric 'mach'; did you mean 'match'"):
        installed_registry().entry("metrics", "mach")
    with pytest.raises(ConfigError, match=r"unknown task 'selfrag_suit'; did you mean 'selfrag_suite'"):
        installed_registry().entry("tasks", "selfrag_suit")


def test_entries_import_nothing_until_used():
    registry = Registry()
    registry.add_catalog({"metrics": {"lazy": {"target": "no_such_module_xyz:Thing", "description": "d"}}}, "pkg")
    assert registry.names("metrics") == ["lazy"]
    with pytest.raises(ConfigError, match=r"metric 'lazy' \(from pkg\) failed to load no_such_module_xyz:Thing"):
        registry.load("metrics", "lazy")


def test_a_second_provider_cannot_silently_replace_a_component():
    registry = Registry()
    registry.add_catalog({"tasks": {"t": {"target": "a:A"}}}, "first")
    registry.add_catalog({"tasks": {"t": {"target": "b:B"}}}, "second")
    assert registry.entry("tasks", "t").target == "a:A"
    assert "already provided by first" in registry.failures[0].error


def test_help_and_list_import_neither_torch_nor_vllm():
    """`--help`, `list` and `list engines`, one after the other in one fresh process: none of the heavy libraries
    is imported after the three (so by none of them)."""
    code = (
        "import sys\nfrom ragbench._cli.main import main\n"
        "for args in (['--help'], ['list'], ['list', 'engines']):\n"
        "    try:\n        main(args)\n    except SystemExit:\n        pass\n"
        "heavy = [m for m in ('torch', 'vllm', 'transformers', 'openai', 'httpx') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_help_reads_the_yaml_tasks_names_without_building_their_classes():
    code = (
        "import sys\nfrom ragbench._cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('jinja2', 'ragbench._yaml_tasks.task') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_list_shows_name_description_and_provider():
    result = cli_here("list", "systems")
    assert result.returncode == 0
    line = next(row for row in result.stdout.splitlines() if row.strip().startswith("vanilla"))
    assert "Retrieve-then-read" in line and line.endswith("[ragbench]")


def test_list_keeps_the_descriptions_in_one_column_past_long_names():
    listed = cli_here("list", "tasks").stdout.split("prompt styles")[0]
    rows = [line for line in listed.splitlines() if line.startswith("  ")]
    starts = {len(line) - len(line[2:].split(" ", 1)[1].lstrip()) for line in rows}
    assert len(rows) > 80 and len(starts) == 1, starts  # hotpotqa_distractor_flashrag pushed its row out


def test_list_groups():
    assert "selfrag_suite      pubhealth, arc_challenge, popqa, asqa" in cli_here("list", "groups").stdout


def test_run_without_tasks_explains_itself():
    result = cli_here()
    assert result.returncode == 2 and "--tasks is required" in result.stderr

"""The registry of plugins is made by the command line, once per command, and given to everything that loads a
component; nothing below it keeps one (no module-level registry, no fallback to a registry of its own)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragbench
from ragbench import _registry
from ragbench.testing import Registry, installed_registry

ROOT = Path(ragbench.__file__).parent.parent
PACKAGES = ("ragbench", "plugins", "tasks", "metrics")


def modules():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_no_module_keeps_a_registry_or_falls_back_to_one():
    """No `global` (a cached singleton), no `get_registry`, no `x or <something>_registry()` fallback."""
    found = []
    for path in modules():
        module = path.relative_to(ROOT)
        text = path.read_text(encoding="utf-8")
        if "global" not in text and "registry" not in text:  # none of the three can be written without these words
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Global):
                found.append(f"{module}:{node.lineno} global {', '.join(node.names)}")
            if isinstance(node, ast.FunctionDef) and node.name == "get_registry":
                found.append(f"{module}:{node.lineno} def get_registry")
            if (
                isinstance(node, ast.BoolOp)
                and isinstance(node.op, ast.Or)
                and any(
                    isinstance(value, ast.Call) and ast.unparse(value.func).endswith("registry")
                    for value in node.values
                )
            ):
                found.append(f"{module}:{node.lineno} {ast.unparse(node)}")
    assert found == []


def test_installed_registry_is_a_new_one_each_call():
    first, second = installed_registry(), installed_registry()
    assert first is not second and first.names("tasks") == second.names("tasks")
    first.add_catalog({"tasks": {"only_here": {"target": "ragbench.tasks.selfrag.demo:Demo"}}}, "tests")
    assert "only_here" in first.names("tasks") and "only_here" not in second.names("tasks")


@pytest.mark.parametrize(
    "target",
    [
        "ragbench._run.evaluator:Evaluator",
        "ragbench._run.rescore.rescore_run:rescore_run",
        "ragbench._engines:load_engine",
        "ragbench._retrieval:load_retriever",
        "ragbench._retrieval.index.building:build_index",
        "ragbench._retrieval.dense.retriever:query_style_class",
        "ragbench._retrieval.dense.retriever:Encoder",
        "ragbench._view.site:Site",
        "ragbench._view.pages:system_class",
    ],
)
def test_what_loads_a_component_is_given_the_registry(target):
    module, _, name = target.partition(":")
    parameter = inspect.signature(getattr(__import__(module, fromlist=[name]), name)).parameters["registry"]
    assert parameter.default is inspect.Parameter.empty


def test_a_command_discovers_the_plugins_once_and_passes_its_registry_down(tmp_path, monkeypatch):
    from ragbench.testing import cli

    made: list[Registry] = []

    def counted() -> Registry:
        made.append(Registry.discover())
        return made[-1]

    monkeypatch.setattr(_registry, "installed_registry", counted)
    result = CliRunner().invoke(
        cli, ["check", "--tasks", "demo", "--model", "scripted:echo", "--no-model", "--output", str(tmp_path / "run")]
    )
    assert result.exit_code == 0, result.output
    assert len(made) == 1  # the plugins' commands merged, the pre-flight planned: one registry
    result = CliRunner().invoke(cli, ["list", "systems"])
    assert result.exit_code == 0 and len(made) == 2  # the next command makes its own

"""One public API: `ragbench.api`, its namespaces (`ragbench.api.text` ...) and `ragbench.testing` for tests
are all a plugin imports of ragbench. The example plugin and its tests import nothing else (read from the
source: every import statement, inside functions too) and load; so do the built-in plugins, without
exception; every public name resolves, lazily."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import ragbench.api
import ragbench.testing
from support import paths

REPO = paths.REPO
EXAMPLE = REPO / "examples" / "ragbench-plugin-example"
NAMESPACES = [importlib.import_module(f"ragbench.api.{name}") for name in ragbench.api.NAMESPACES]
PUBLIC = {module.__name__: set(module.__all__) for module in (ragbench.api, *NAMESPACES, ragbench.testing)}


def ragbench_imports(path: Path) -> list[tuple[str, list[str], int]]:
    """(module, names imported from it, line) of every absolute import of ragbench in a source file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names if alias.name.split(".")[0] == "ragbench"]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "ragbench":
            found.append((node.module, [alias.name for alias in node.names], node.lineno))
    return found


def non_public_imports(path: Path) -> list[str]:
    """The imports of ragbench in `path` that are not public names of the public modules."""
    bad = []
    for module, names, line in ragbench_imports(path):
        if module not in PUBLIC:
            bad.append(f"{path.name}:{line} imports {module}")
        else:  # `import ragbench.api` (no names) reaches only public names too
            bad += [
                f"{path.name}:{line}: {module} has no public {name}"
                for name in names
                if name != "*" and name not in PUBLIC[module]
            ]
    return bad


def test_every_public_name_resolves_and_nothing_else_does():
    for module in (ragbench.api, *NAMESPACES, ragbench.testing):
        for name in module.__all__:
            assert getattr(module, name) is not None, name
    assert sorted(dir(ragbench.api)) == sorted([*ragbench.api.__all__, *ragbench.api.NAMESPACES])
    assert all(sorted(dir(namespace)) == namespace.__all__ for namespace in NAMESPACES)
    assert ragbench.api.text is importlib.import_module("ragbench.api.text")
    with pytest.raises(AttributeError, match="ragbench.api.text has no 'Task'"):
        ragbench.api.text.Task  # noqa: B018
    with pytest.raises(AttributeError, match="ragbench.api has no 'Evaluator'"):
        ragbench.api.Evaluator  # noqa: B018
    assert ragbench.api.Task is importlib.import_module("ragbench._task").Task


def test_each_name_has_one_home():
    """A namespace's name (`ragbench.api.text.normalize_answer`) is no attribute of `ragbench.api` besides, and
    no internal name is one of its: `ragbench.api` answers exactly `__all__` and its namespaces."""
    elsewhere = {name for namespace in NAMESPACES for name in namespace.__all__} - set(ragbench.api.__all__)
    for name in sorted(elsewhere | {"LLM", "ReadOnlyError", "apply_stop", "load_yaml", "tiktoken_counter"}):
        with pytest.raises(AttributeError, match=f"ragbench.api has no '{name}'"):
            getattr(ragbench.api, name)
    with pytest.raises(ImportError):
        exec("from ragbench.api import normalize_answer", {})
    assert len(elsewhere) > 80


def names_for_type_checkers(module: ModuleType) -> dict[str, str]:
    """name -> the module it is imported from in `module`'s `if TYPE_CHECKING:` block (read from the source)."""
    names = {}
    for node in ast.parse(Path(module.__file__).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                names.update({alias.asname or alias.name: statement.module for alias in statement.names})
    return names


def test_type_checkers_read_each_public_name_from_the_module_it_is_imported_from_at_run_time():
    for module in (ragbench.api, *NAMESPACES):
        lazy = {name: source for source, names in module._MODULES.items() for name in names}
        assert names_for_type_checkers(module) == lazy, module.__name__


def test_a_hook_module_importing_hookimpl_or_a_namespace_loads_none_of_the_contract():
    script = (
        "import sys\nfrom ragbench.api import hookimpl\n"
        f"import {', '.join(namespace.__name__ for namespace in NAMESPACES)}\n"
        "print(sorted(m for m in ('ragbench._context', 'ragbench._llm', 'ragbench._task') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_example_plugin_and_its_tests_import_only_the_public_api():
    files = sorted(EXAMPLE.rglob("*.py"))
    assert {"plugin.py", "task.py", "system.py", "metric.py", "commands.py", "test_trivia_plugin.py"} <= {
        f.name for f in files
    }
    assert [problem for path in files for problem in non_public_imports(path)] == []
    for path in files:
        if path.parent.name == "ragbench_plugin_example":
            importlib.import_module(f"ragbench_plugin_example.{path.stem}".removesuffix(".__init__"))


def test_the_scan_sees_an_internal_import_and_a_name_the_api_lacks(tmp_path):
    source = tmp_path / "plugin.py"
    source.write_text(
        "import ragbench.api\nfrom ragbench.api import Task, Evaluator\n\n\ndef f():\n"
        "    from ragbench._storage.jsonl import iter_jsonl\n"
    )
    assert non_public_imports(source) == [
        "plugin.py:2: ragbench.api has no public Evaluator",
        "plugin.py:6 imports ragbench._storage.jsonl",
    ]


def test_built_in_plugins_import_only_the_public_api():
    problems = []
    for root in ("tasks", "plugins", "metrics"):
        for path in sorted((REPO / root).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            for module, names, line in ragbench_imports(path):
                if module.startswith(("ragbench.tasks", "ragbench.plugins", "ragbench.metrics")):
                    continue  # a plugin folder's own modules (tests/project/test_import_boundaries.py checks the rest)
                if module not in PUBLIC:
                    problems.append(f"{relative}:{line} imports {module}")
                else:
                    problems += [
                        f"{relative}:{line}: {module} has no public {n}" for n in names if n not in PUBLIC[module]
                    ]
    assert problems == []


def test_the_plugin_guide_lists_every_public_name_in_the_row_of_its_namespace():
    guide = (REPO / "docs" / "writing-plugins.md").read_text(encoding="utf-8")
    table = guide[guide.index("## The public API") : guide.index("## A plugin from nothing")]
    rows = {line.split("|")[1].strip(" `"): line for line in table.splitlines() if line.startswith("| `ragbench.api")}
    assert sorted(rows) == sorted(module.__name__ for module in (ragbench.api, *NAMESPACES))
    assert [
        f"{module.__name__}.{name}"
        for module in (ragbench.api, *NAMESPACES)
        for name in module.__all__
        if f"`{name}`" not in rows[module.__name__].split("|", 2)[2]
    ] == []

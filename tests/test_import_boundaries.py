"""Import boundaries, read from the source (every import statement: module level, inside functions and
under TYPE_CHECKING): the core (ragbench/) imports no plugin (tasks/, plugins/, metrics/); a plugin folder
(one task family of tasks/, one system of plugins/, metrics/) imports no other folder's internals, only the
core (shared helpers live in neutral core modules: ragbench._shared.sentences, ragbench._shared.citations, ...); and no
modules import each other in a circle."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# import name -> source folder (pyproject.toml's package-dir)
PACKAGES = {"ragbench": REPO / "ragbench", "ragbench.tasks": REPO / "tasks", "ragbench.plugins": REPO / "plugins",
            "ragbench.metrics": REPO / "metrics"}
PLUGIN_PACKAGES = ("ragbench.tasks", "ragbench.plugins", "ragbench.metrics")


def modules() -> dict[str, tuple[Path, bool]]:
    """Import name -> (file, is a package's __init__)."""
    out = {}
    for package, root in PACKAGES.items():
        for path in root.rglob("*.py"):
            if ".venv" in path.parts:
                continue
            parts = [p for p in path.relative_to(root).with_suffix("").parts if p != "__init__"]
            if package == "ragbench" and parts and f"ragbench.{parts[0]}" in PACKAGES:
                continue
            out[".".join([package, *parts])] = (path, path.name == "__init__.py")
    return out


def imported(name: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The module names an import statement may refer to (the module and each `from` name under it)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    return [module, *(f"{module}.{alias.name}" for alias in node.names)]


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph = {}
    for name, (path, is_package) in known.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets.update(t for t in imported(name, is_package, node) if t in known and t != name)
        graph[name] = targets
    return graph


def folder(module: str) -> str:
    """The plugin folder a module belongs to: a task family (ragbench.tasks.crag), a system
    (ragbench.plugins.selfrag, the folder plugins/selfrag/), the metrics; "core" for ragbench itself."""
    parts = module.split(".")
    if module in PLUGIN_PACKAGES:
        return module  # the package's hook module (its __init__): the whole package is its own
    if module.startswith(("ragbench.tasks.", "ragbench.plugins.")):
        return ".".join(parts[:3])
    if module.startswith("ragbench.metrics."):
        return "ragbench.metrics"
    return "core"


def crossing(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    edges = set()
    for source, targets in graph.items():
        for target in targets:
            mine, theirs = folder(source), folder(target)
            if theirs == "core" or mine == theirs or (mine in PLUGIN_PACKAGES and target.startswith(mine + ".")):
                continue
            edges.add((source, target))
    return edges


def test_the_graph_sees_the_whole_code_base():
    graph = import_graph()
    assert {"ragbench._cli.main", "ragbench.tasks.crag.task", "ragbench.plugins.selfrag.system", "ragbench.metrics.citation"} <= set(graph)
    assert "ragbench._retrieval.base" in graph["ragbench._retrieval.bm25"]  # relative imports resolved


def test_the_core_imports_no_plugin():
    graph = import_graph()
    leaks = sorted((s, t) for s, ts in graph.items() if folder(s) == "core" for t in ts if folder(t) != "core")
    assert not leaks, f"core modules import plugin code (reach it through a hook instead): {leaks}"


def test_plugin_folders_import_only_the_core_and_themselves():
    edges = sorted(crossing(import_graph()))
    assert not edges, f"imports across plugin folders (use the core's contract or a neutral core module): {edges}"


def test_no_import_cycles():
    graph = import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    assert not cycles, f"modules importing each other in a circle: {cycles}"


# The contract plugins code against: it knows nothing of the runner that drives it, nor of the viewer.
CONTRACT = ("ragbench._task", "ragbench._system", "ragbench._metric", "ragbench._types", "ragbench._context",
            "ragbench._checks", "ragbench._records")


def test_the_contract_loads_nothing_of_the_runner_or_the_viewer():
    script = "import sys\n" + "".join(f"import {module}\n" for module in CONTRACT) + (
        "print(sorted(m for m in sys.modules if m.startswith(('ragbench._run', 'ragbench._view', 'ragbench._cli'))))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_runner_imports_nothing_of_the_viewer():
    graph = import_graph()
    leaks = sorted((s, t) for s, ts in graph.items() if s.startswith("ragbench._run") for t in ts
                   if t.startswith("ragbench._view"))
    assert not leaks, f"runner modules import the viewer: {leaks}"

"""Import boundaries, read from the source by tools/import_layers.py: every import goes down the layer table
(module level and inside functions alike; TYPE_CHECKING excepted), no two units import each other and no
units import each other in a circle; the built-in plugins import `ragbench.api` and `ragbench.testing` only,
and a plugin folder no other folder; the core imports no plugin; the contract loads nothing of the
runner, the engines or replay; and docs/internals.md draws the layers as measured."""

from __future__ import annotations

import ast
import functools
import importlib.util
import itertools
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import paths

REPO = paths.REPO


def load_layers():
    spec = importlib.util.spec_from_file_location("import_layers", REPO / "tools" / "import_layers.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


layers = load_layers()


@functools.cache
def import_graph(type_checking: bool = True) -> dict[str, set[str]]:
    """tools/import_layers.py's import graph, read once per variant (the two read the same trees, parsed once); the
    tests only read it."""
    return layers.import_graph(type_checking)


@pytest.fixture(scope="module", autouse=True)
def trees_forgotten_after_this_file():
    """The parsed modules are not kept in the worker for the rest of the session (the graphs are)."""
    yield
    layers.forget_parsed()


def folder(module: str) -> str:
    """The plugin folder a module belongs to: a task family (ragbench.tasks.crag), a system
    (ragbench.plugins.selfrag, the folder plugins/selfrag/), the metrics; "core" for ragbench itself."""
    parts = module.split(".")
    if module in layers.PLUGIN_PACKAGES:
        return module  # the package's hook module (its __init__): the whole package is its own
    if module.startswith(("ragbench.tasks.", "ragbench.plugins.")):
        return ".".join(parts[:3])
    if module.startswith("ragbench.metrics."):
        return "ragbench.metrics"
    return "core"


TASKS_SHARED = "ragbench.tasks.shared"  # the --data checks, options, corpus commands several benchmarks share


def crossing(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    edges = set()
    for source, targets in graph.items():
        for target in targets:
            mine, theirs = folder(source), folder(target)
            if theirs == "core" or mine == theirs or (mine in layers.PLUGIN_PACKAGES and target.startswith(mine + ".")):
                continue
            if theirs == TASKS_SHARED and mine.startswith("ragbench.tasks."):
                continue  # what the benchmark folders share (tasks/shared/): neutral to them, no system's
            edges.add((source, target))
    return edges


def test_the_graph_sees_the_whole_code_base():
    graph = import_graph()
    assert {
        "ragbench._cli.main",
        "ragbench.tasks.crag.task",
        "ragbench.plugins.selfrag.system",
        "ragbench.metrics.citation",
    } <= set(graph)
    assert "ragbench._retrieval.base" in graph["ragbench._retrieval.bm25.retriever"]  # relative imports resolved
    assert "ragbench._task" in graph["ragbench.api"]  # the api's names, imported on first use


def test_imports_inside_functions_count_and_those_for_type_checkers_do_not():
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nimport a\nif TYPE_CHECKING:\n    import b\nelse:\n    import c\n"
        "def f():\n    import d\n    if typing.TYPE_CHECKING:\n        import e\n"
    )
    assert sorted(
        alias.name
        for node in layers.statements(tree, type_checking=False)
        for alias in node.names
        if alias.name != "TYPE_CHECKING"
    ) == ["a", "c", "d"]
    assert len(layers.statements(tree, type_checking=True)) == 6


# A block of code: imports, and nested blocks of a kind with their own bodies (an `if` and a `for` also have an
# `else`, a `try` its `except`, a `match` its `case`).
BLOCKS = (
    "def f():", "class C:", "if TYPE_CHECKING:", "if typing.TYPE_CHECKING:", "if ready:", "try:", "with lock:",
    "for item in items:", "match value:",
)  # fmt: skip
code = st.recursive(
    st.just("import"),
    lambda inner: st.tuples(
        st.sampled_from(BLOCKS), st.lists(inner, min_size=1, max_size=3), st.lists(inner, max_size=2)
    ),
    max_leaves=12,
)


def source_of(items, names, depth=0, hidden=False) -> tuple[list[str], list[str]]:
    """The lines of `items` and the module names imported where they run (not under TYPE_CHECKING)."""
    lines, running = [], []
    for item in items:
        pad = "    " * depth
        if item == "import":
            name = f"m{next(names)}"
            lines.append(f"{pad}import {name}")
            running += [] if hidden else [name]
            continue
        header, body, orelse = item
        checking = "TYPE_CHECKING" in header
        case = header.startswith("match")  # its body lies in a `case _:`
        more, found = source_of(body, names, depth + 1 + case, hidden or checking)
        lines += [pad + header, *([pad + "    case _:"] if case else []), *more]
        running += found
        if orelse and header.startswith(("if", "for")):
            more, found = source_of(orelse, names, depth + 1, hidden)
            lines += [pad + "else:", *more]
            running += found
        elif header == "try:":
            more, found = source_of(orelse, names, depth + 1, hidden) if orelse else ([pad + "    pass"], [])
            lines += [pad + "except ImportError:", *more]
            running += found
    return lines, running


@settings(max_examples=60)
@given(st.lists(code, min_size=1, max_size=4))
def test_the_reader_finds_every_import_that_runs_and_none_for_type_checkers(items):
    lines, running = source_of(items, itertools.count())
    tree = ast.parse("\n".join(lines))
    assert sorted(
        alias.name for node in layers.statements(tree, type_checking=False) for alias in node.names
    ) == sorted(running)
    assert len(layers.statements(tree, type_checking=True)) == sum(
        line.lstrip().startswith("import ") for line in lines
    )


def test_the_table_names_every_unit_once():
    names = [name for layer in layers.LAYERS for name in layer.units]
    assert len(names) == len(set(names))
    assert set(layers.unit_graph(import_graph())) == set(names), "every unit in tools/import_layers.py LAYERS"


def test_every_import_goes_down_the_layer_table():
    problems = layers.against_table(layers.unit_graph(import_graph(type_checking=False)))
    assert not problems, "imports against the layers (tools/import_layers.py LAYERS):\n" + "\n".join(problems)


# The rooms that still name a room beside or above them for the type checker alone (an import under
# TYPE_CHECKING: no arrow at run time, yet the room's code is read against the other's types). No other joins them:
# a room below another types what it hands up or reads back with types of its own (issue 92: the cost room's
# `CostSections`, `CostFigures`, `CostedRun`, where it named the reports' results.json and compare's `Run`).
TYPED_UPWARD = {
    "_components",
    "_context",
    "_engines",
    "_llm",
    "_metric",
    "_retrieval",
    "_scheduler",
    "_storage",
    "_system",
    "_task",
    "_values",
}


def test_no_other_room_names_one_above_it_even_for_the_type_checker():
    units = layers.unit_graph(import_graph(type_checking=True))
    upward = {
        source: sorted(target for target in targets if layers.DEPTH[target] <= layers.DEPTH[source])
        for source, targets in units.items()
        if layers.LAYERS[layers.DEPTH[source]] is not layers.LAYERS[0]
    }
    named = {source: targets for source, targets in upward.items() if targets and source not in TYPED_UPWARD}
    assert not named, f"type-only imports of a room above (give the lower room a type of its own): {named}"


def test_the_table_check_refuses_an_arrow_up_or_sideways_and_a_plugin_reaching_inside():
    units = {
        "_storage": {"_run": ["ragbench._storage.x -> ragbench._run.y"]},
        "_run": {"_view": ["v"]},
        "tasks": {"_run": ["ragbench.tasks.crag.loader -> ragbench._run.lifetime.workers"], "api": ["fine"]},
    }
    problems = layers.against_table(units)
    assert [p.split(" (")[0] for p in problems] == ["_run -> _view", "_storage -> _run", "tasks -> _run"]
    assert "ragbench._storage.x -> ragbench._run.y" in problems[1]


def test_no_two_units_import_each_other_nor_any_in_a_circle():
    units = layers.unit_graph(import_graph(type_checking=False))
    assert layers.mutual_pairs(units) == []
    assert layers.cycles(units) == []


def test_the_core_imports_no_plugin():
    graph = import_graph()
    leaks = sorted((s, t) for s, ts in graph.items() if folder(s) == "core" for t in ts if folder(t) != "core")
    assert not leaks, f"core modules import plugin code (reach it through a hook instead): {leaks}"


def test_plugin_folders_import_only_the_core_and_themselves():
    edges = sorted(crossing(import_graph()))
    assert not edges, f"imports across plugin folders (use the core's contract or a neutral core module): {edges}"


def test_no_import_cycles():
    cycles = layers.cycles(import_graph())
    assert not cycles, f"modules importing each other in a circle: {cycles}"


def test_the_contract_loads_nothing_of_the_runner_the_engines_replay_or_the_viewer():
    script = (
        "import sys\nfrom ragbench.api import Context, Example, Metric, System, Task\n"
        "print(sorted(m for m in sys.modules if m.startswith(('ragbench._run', 'ragbench._view', 'ragbench._cli', "
        "'ragbench._engines', 'ragbench._replay', 'ragbench._scheduler', 'ragbench._retrieval', "
        "'ragbench._nli', 'ragbench._registry', 'ragbench._reports'))))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_runner_imports_nothing_of_the_viewer():
    graph = import_graph()
    leaks = sorted(
        (s, t) for s, ts in graph.items() if s.startswith("ragbench._run") for t in ts if t.startswith("ragbench._view")
    )
    assert not leaks, f"runner modules import the viewer: {leaks}"


def test_the_docs_draw_the_layers_as_measured():
    internals = layers.INTERNALS.read_text(encoding="utf-8")
    section = layers.drawn(layers.unit_graph(import_graph(type_checking=False)))
    assert layers.written(internals, section) == internals, (
        "docs/internals.md's layers are stale: run `python tools/import_layers.py --write`"
    )

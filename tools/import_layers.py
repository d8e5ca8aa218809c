"""The layers of ragbench's source: the declared table (`LAYERS`), the import graph read from the source
with `ast`, the arrows against the table, and the picture of the layers docs/internals.md shows.

    python tools/import_layers.py            # the units, their imports, and anything against the table
    python tools/import_layers.py --write    # redraw the table and the picture in docs/internals.md

A unit is a top-level module or package of `ragbench` (`_run`, `_scheduler`, `api`) or a built-in plugin
folder (`tasks`, `plugins`, `metrics`). Every import statement counts, at module level and inside
functions alike, as do the modules `ragbench.api` and its namespaces import on first use (their `_MODULES`
tables); an import under `if TYPE_CHECKING:` does not (it never runs). A unit may import the units of the
layers below its own, nothing beside or above it; the built-in plugins import `ragbench.api` (with its
namespaces) and `ragbench.testing` only.
tests/project/test_import_boundaries.py holds the code to this table, and the docs to its picture.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# import name -> source folder (pyproject.toml's package-dir)
PACKAGES = {
    "ragbench": REPO / "ragbench",
    "ragbench.tasks": REPO / "tasks",
    "ragbench.plugins": REPO / "plugins",
    "ragbench.metrics": REPO / "metrics",
}
PLUGIN_PACKAGES = ("ragbench.tasks", "ragbench.plugins", "ragbench.metrics")
PUBLIC = ("api", "testing")  # the units a built-in plugin may import
INTERNALS = REPO / "docs" / "internals.md"
BEGIN, END = "<!-- layers: written by tools/import_layers.py -->", "<!-- layers: end -->"


@dataclass(frozen=True)
class Layer:
    title: str
    units: dict[str, str]  # unit -> what it is


# Top to bottom. A unit may import the units of every layer below its own.
LAYERS = (
    Layer(
        "built-in plugins",
        {
            "tasks": "the benchmarks (tasks/): loaders, prompts, their own metrics and commands",
            "plugins": "the systems (plugins/): one folder per RAG method",
            "metrics": "the metrics several task families share (metrics/)",
        },
    ),
    Layer(
        "entry points",
        {
            "api": "`ragbench.api` and its namespaces: the public API plugins import",
            "testing": "`ragbench.testing`: scripted LLMs, contexts and whole runs for plugin tests",
            "__main__": "`python -m ragbench`",
        },
    ),
    Layer("command line", {"_cli": "the `ragbench` command, its subcommands and options, commands plugins add"}),
    Layer(
        "running and viewing",
        {
            "_run": "a run: planning, pre-flight, the evaluator, rescoring, workers, lifecycle, the estimate",
            "_view": "`ragbench view`: the web viewer of run folders (read only)",
            "_trackers": "`--wandb`, `--mlflow`, `ragbench log`: a finished run logged to experiment trackers",
        },
    ),
    Layer("results", {"_reports": "aggregation, score intervals, compare, report.md and plots, failures, reproduce"}),
    Layer(
        "cost",
        {
            "_cost": "what a run costs: prices, each attempt's cost, `--max-cost`, results.json's cost sections and their "
            "lines, compare's cost table, the estimate's pilot and figures"
        },
    ),
    Layer(
        "plugin discovery",
        {"_registry": "the registry: plugins found through their hooks, the catalogue, YAML task folders"},
    ),
    Layer(
        "catalogue entries",
        {"_catalog": "a catalogue entry: a plugin's component by kind and name, checked against its base when loaded"},
    ),
    Layer(
        "pipeline components",
        {"_components": "rerankers and refiners between the retriever and the reader (`--reranker`, `--refiner`)"},
    ),
    Layer(
        "YAML tasks",
        {"_yaml_tasks": "the YAML-task engine: a benchmark declared as a YAML file becomes a Task"},
    ),
    Layer(
        "shared plugin helpers",
        {
            "_shared": "answer matching, citations, sentences, prompt formats, the reader system",
            "_apps": "a user's own application as a system: its calls, its spans captured or received, its replay",
        },
    ),
    Layer(
        "an example's context and its backends",
        {
            "_context": "`ctx`: what a system or metric gets for one example",
            "_nli": "the NLI entailment judge (`ctx.nli`)",
            "_engines": "LLM engines: hf, vllm, openai, replicas, scripted, replay",
            "_retrieval": "retrievers, corpora, on-disk indexes, the retrieval handle (`ctx.retriever`)",
        },
    ),
    Layer(
        "the contract and the calls",
        {
            "_task": "`Task`: a benchmark's data, prompting and scoring; the protocols one benchmark adds",
            "_system": "`System`: a RAG method, one example at a time",
            "_metric": "`Metric`, `Score`: scoring a prediction",
            "_llm": "`LLM`: the handle a system awaits (`ctx.llm`), every call traced",
            "_scheduler": "the call pool: every example's LLM and retrieval calls, batched onto their backends",
            "_replay": "recording a run's external calls and replaying them offline",
        },
    ),
    Layer(
        "the sample record",
        {"_records": "`SampleRecord`: the one typed sample record, and its reader `read_samples`"},
    ),
    Layer(
        "files, data types and a run's configuration",
        {
            "_storage": "run folders, the JSONL reader and writer, response and page caches, data files",
            "_types": "`Example`, `Document`, `Prediction`, `Step`: the data plugins exchange",
            "_config": "`RunConfig`: a run's options in groups, each option declared once, and the run's identity",
            "_checks": "`Preflight`: the pre-flight's problem collector and probes",
            "_imports": "importing a `module:attribute` target",
            "_ray_connect": "joining or starting Ray: a cluster's address probed within a deadline, one line a failure",
        },
    ),
    Layer(
        "values",
        {
            "_values": "an LLM call's request and response, a chat turn and its images, plugins' typed options, what JSON "
            "holds, URLs' credentials",
            "_plugin_calls": "the guard around every call into plugin code: what it raises, told and counted",
        },
    ),
    Layer(
        "foundations",
        {
            "ragbench": "the package itself (its version)",
            "_errors": "`ConfigError`, `RecordError` and the exit codes",
            "_regular_files": "opening a file only where a regular file is there (never a FIFO, device or folder)",
            "_hookspecs": "the plugin hooks",
            "_builtin": "the built-in catalogue (registry.yaml)",
            "_class_defaults": "read-only class defaults of the contract",
            "_read_only": "read-only values: what plugins are handed and must not change for the next one",
            "_trace_groups": "`ctx.group`: the structure of a trace",
            "_in_flight": "which examples still work toward their next pooled call",
            "_stop_signals": "the signals that stop a command",
            "_children": "the processes this process started that still run",
            "_statistics": "the bootstrap, paired tests, multiple testing, PPI, agreement of raters and with labels",
        },
    ),
)
DEPTH = {unit: depth for depth, layer in enumerate(LAYERS) for unit in layer.units}


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
        base = base[: len(base) - (node.level - 1)]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    return [module, *(f"{module}.{alias.name}" for alias in node.names)]


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@cache
def _parsed_text(text: str) -> ast.Module:
    return ast.parse(text)


def parsed(path: Path) -> ast.Module:
    """`path`'s syntax tree, parsed once per process for each text it has had (parsing is most of the tools' time:
    the graph's two variants, and tests/project's checks of the test files, read the same trees)."""
    return _parsed_text(path.read_text(encoding="utf-8"))


def forget_parsed() -> None:
    """Drops the trees `parsed` keeps (a long-lived process that read the whole tree once)."""
    _parsed_text.cache_clear()


# the fields that hold statements: an import is a statement, and no expression holds one
_STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def statements(tree: ast.AST, type_checking: bool) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, module level and inside functions; those under
    `if TYPE_CHECKING:` only when `type_checking`."""
    found, pending = [], [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If) and _type_checking(node.test) and not type_checking:
            pending.extend(node.orelse)
        else:
            for field in _STATEMENT_FIELDS:
                pending.extend(getattr(node, field, None) or ())
    return found


def lazy_modules(tree: ast.Module) -> list[str]:
    """The modules a module-level `_MODULES = {"module": names}` table imports on first use (ragbench.api and its
    namespaces)."""
    return [
        key.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Dict)
        and any(isinstance(t, ast.Name) and t.id == "_MODULES" for t in node.targets)
        for key in node.value.keys
        if isinstance(key, ast.Constant) and isinstance(key.value, str)
    ]


def import_graph(type_checking: bool = True) -> dict[str, set[str]]:
    """Module -> the ragbench modules it imports (with those under TYPE_CHECKING when `type_checking`)."""
    known = modules()
    graph = {}
    for name, (path, is_package) in known.items():
        tree = parsed(path)
        targets = {t for node in statements(tree, type_checking) for t in imported(name, is_package, node)}
        targets.update(lazy_modules(tree))
        graph[name] = {t for t in targets if t in known and t != name}
    return graph


def unit(module: str) -> str:
    parts = module.split(".")
    if module.startswith(PLUGIN_PACKAGES):
        return parts[1]
    return parts[1] if len(parts) > 1 else parts[0]


def unit_graph(graph: dict[str, set[str]]) -> dict[str, dict[str, list[str]]]:
    """Unit -> the units it imports -> the module imports that make that arrow ("a -> b")."""
    units: dict[str, dict[str, list[str]]] = {unit(m): {} for m in graph}
    for source, targets in sorted(graph.items()):
        for target in sorted(targets):
            if unit(source) != unit(target):
                units[unit(source)].setdefault(unit(target), []).append(f"{source} -> {target}")
    return units


def against_table(units: dict[str, dict[str, list[str]]]) -> list[str]:
    """The arrows the table forbids, one line each, with the imports that make them; and units it lacks."""
    problems = [f"{u}: not in the layer table (tools/import_layers.py LAYERS)" for u in sorted(units) if u not in DEPTH]
    for source, targets in sorted(units.items()):
        for target, why in sorted(targets.items()):
            if source not in DEPTH or target not in DEPTH:
                continue
            plugin = LAYERS[DEPTH[source]] is LAYERS[0]
            if (target not in PUBLIC) if plugin else DEPTH[target] <= DEPTH[source]:
                problems.append(
                    f"{source} -> {target} ({LAYERS[DEPTH[source]].title} may not import "
                    f"{LAYERS[DEPTH[target]].title}): {'; '.join(why)}"
                )
    return problems


def cycles(graph: dict[str, set[str]] | dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan): nodes importing each other in a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
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
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def mutual_pairs(units: dict[str, dict[str, list[str]]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, targets in units.items() for b in targets if a < b and a in units.get(b, {}))


def reduced(units: dict[str, dict[str, list[str]]]) -> dict[str, list[str]]:
    """Each unit's arrows less those another path already implies (the transitive reduction of an acyclic graph)."""
    reach: dict[str, set[str]] = {}

    def reachable(node: str) -> set[str]:
        if node not in reach:
            reach[node] = set()
            for target in units.get(node, {}):
                reach[node] |= {target} | reachable(target)
        return reach[node]

    return {
        source: sorted(t for t in targets if not any(t in reachable(o) for o in targets if o != t))
        for source, targets in units.items()
    }


def drawn(units: dict[str, dict[str, list[str]]]) -> str:
    """The layer table and the picture of the measured graph, as docs/internals.md shows them."""
    rows = ["| layer | unit | what it is | may import |", "|---|---|---|---|"]
    for depth, layer in enumerate(LAYERS):
        below = (
            "`ragbench.api`, `ragbench.testing`"
            if depth == 0
            else (
                f"layers {depth + 2}-{len(LAYERS)}"
                if depth + 2 < len(LAYERS)
                else f"layer {len(LAYERS)}"
                if depth + 2 == len(LAYERS)
                else "nothing of ragbench"
            )
        )
        for position, (name, what) in enumerate(layer.units.items()):
            title = f"{depth + 1} {layer.title}" if position == 0 else ""
            rows.append(f"| {title} | `{name}` | {what} | {below} |")
    arrows = reduced(units)
    width = max(len(name) for name in DEPTH)
    picture = [
        "```text",
        "layer  unit" + " " * (width - 3) + "imports (measured; an arrow another path implies is left out)",
    ]
    for depth, layer in enumerate(LAYERS):
        picture.append(f"{depth + 1:>2} {layer.title} " + "-" * (width + 60 - len(layer.title)))
        for name in layer.units:
            targets = " ".join(arrows.get(name, ()))
            picture.append(f"       {name:<{width}}  {'-> ' + targets if targets else ''}".rstrip())
    picture.append("```")
    return "\n".join([BEGIN, *rows, "", *picture, END])


def written(text: str, section: str, begin: str = BEGIN, end: str = END) -> str:
    """`text` (docs/internals.md) with the part between the markers `begin` and `end` replaced by `section`
    (which starts and ends with them)."""
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{INTERNALS}: no {begin} ... {end} markers to write between")
    return pattern.sub(lambda _: section, text, count=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="redraw the layers in docs/internals.md")
    args = parser.parse_args(argv)
    units = unit_graph(import_graph(type_checking=False))
    if args.write:
        INTERNALS.write_text(written(INTERNALS.read_text(encoding="utf-8"), drawn(units)), encoding="utf-8")
        return 0
    for source in sorted(units, key=lambda u: (DEPTH.get(u, -1), u)):
        print(f"{source}: {' '.join(sorted(units[source])) or '-'}")
    problems = (
        against_table(units)
        + [f"mutual: {a} <-> {b}" for a, b in mutual_pairs(units)]
        + [f"cycle: {' '.join(c)}" for c in cycles(units)]
    )
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

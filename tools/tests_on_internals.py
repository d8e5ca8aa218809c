"""How many test files reach into ragbench's internals (issue 80): the `tests/**/test_*.py` files that import a
private module of ragbench (`ragbench._run`, `from ragbench._config.run_config import RunConfig`, `from ragbench
import _registry`), anywhere in the file, and the strings that name a name inside a private module by its dotted
path, the targets of monkeypatches by string (`monkeypatch.setattr("ragbench._run.x.y", ...)`,
`mock.patch("ragbench._...")`, or `"ragbench._cli.main.split_names"` in a parametrize list that a patch is later
handed), which break when a room moves. For comparison with a plain `grep -l ragbench._` it also counts the files
that name `ragbench._` anywhere. A file counts as reaching the internals also where a test-side module it imports
(tests/support's helpers, a family's own helper modules), or one those import in turn, imports one (issue 92: a
helper that imports `Evaluator` puts every test using it on the internals).

    python tools/tests_on_internals.py            # the counts
    python tools/tests_on_internals.py --list     # and the files, each with the private modules it imports

The public faces are `ragbench.api` (with its namespaces), `ragbench.testing` and the command line; the built-in
plugin packages (`ragbench.tasks`, `ragbench.metrics`, `ragbench.plugins`) count as public here.
"""

from __future__ import annotations

import argparse
import ast
import functools
import re
from pathlib import Path

from import_layers import parsed, statements

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
DOTTED_PATH = re.compile(r"ragbench\._[\w.]*\.\w+")


def is_module(dotted: str) -> bool:
    """Whether `ragbench.x.y` is a module or package of this checkout (read from the files, nothing imported)."""
    place = REPO.joinpath(*dotted.split("."))
    return place.with_suffix(".py").is_file() or (place / "__init__.py").is_file()


def names_inside_internals(tree: ast.AST) -> int:
    """The strings that name a name inside a private module (`"ragbench._cli.main.split_names"`): the targets a
    patch is handed by string, wherever the string is written. A module's own name (a logger's, `python -m`'s) and
    a catalogue target (`module:Name`) are not counted: they name a module, not a name in it."""
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and DOTTED_PATH.fullmatch(node.value)
        and not is_module(node.value)
        and is_module(node.value.rpartition(".")[0])
    )


def private_modules(tree: ast.AST) -> set[str]:
    """The private ragbench modules a module imports (`ragbench._x...`), at any depth of the file."""
    found = set()
    for node in statements(tree, True):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("ragbench._")}
        elif node.module and node.level == 0:
            if node.module.startswith("ragbench._"):
                found.add(node.module)
            elif node.module == "ragbench":
                found |= {f"ragbench.{a.name}" for a in node.names if a.name.startswith("_")}
    return found


@functools.cache
def private_modules_of(path: Path) -> frozenset[str]:
    """`private_modules` of the file at `path`, read once."""
    return frozenset(private_modules(parsed(path)))


def test_files() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def test_side_modules() -> dict[str, Path]:
    """The modules of tests/ by the names tests import them under: a family folder's modules by their own name
    (tests/conftest.py puts every family folder on sys.path), tests/support's as `support.NAME`."""
    found: dict[str, Path] = {}
    for path in sorted(TESTS.rglob("*.py")):
        if path.name.startswith("test_") or path.name in ("__init__.py", "conftest.py"):
            continue
        folder = path.parent.relative_to(TESTS)
        found[f"support.{path.stem}" if folder.parts[:1] == ("support",) else path.stem] = path
    return found


def test_side_imports(tree: ast.AST, modules: dict[str, Path]) -> set[str]:
    """The test-side modules (`modules`' names) a module imports, at any depth of the file."""
    found = set()
    for node in statements(tree, True):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif node.module and node.level == 0:
            if node.module in modules:
                found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules}
    return found


def reached_internals(files: list[Path]) -> dict[Path, set[str]]:
    """Each file of `files` that reaches a private ragbench module, directly or through test-side modules, with
    the private modules reached."""
    modules = test_side_modules()
    read = {*files, *modules.values()}
    direct = {path: private_modules_of(path) for path in read}
    helpers = {path: test_side_imports(parsed(path), modules) for path in read}
    reached: dict[Path, set[str]] = {}
    for path in files:
        seen, todo, found = {path}, [path], set()
        while todo:
            current = todo.pop()
            found |= direct[current]
            for name in helpers[current]:
                if modules[name] not in seen:
                    seen.add(modules[name])
                    todo.append(modules[name])
        if found:
            reached[path] = found
    return reached


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="list the files and the private modules each imports")
    options = parser.parse_args(argv)
    files = test_files()
    on_internals = {}
    patches = mentions = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        mentions += "ragbench._" in text
        patches += names_inside_internals(parsed(path))
        if modules := private_modules_of(path):
            on_internals[path] = modules
    reached = reached_internals(files)
    if options.list:
        for path, modules in reached.items():
            how = "" if path in on_internals else " (through test helpers)"
            print(f"{path.relative_to(REPO)}{how}: {', '.join(sorted(modules))}")
    share = len(on_internals) / len(files) if files else 0.0
    print(f"test files importing ragbench internals: {len(on_internals)} of {len(files)} ({share:.0%})")
    share = len(reached) / len(files) if files else 0.0
    print(
        f"test files reaching ragbench internals, through test helpers too: {len(reached)} of {len(files)} ({share:.0%})"
    )
    print(f"test files naming `ragbench._` anywhere (imports, strings, docstrings): {mentions} of {len(files)}")
    print(f"strings naming a name inside an internal module (monkeypatch targets by path): {patches}")


if __name__ == "__main__":
    main()

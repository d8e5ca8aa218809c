"""The families of tests/ are the rooms of the source (issues 80 and 92): a test file's family is the folder it lies
in, and which folders may be families is read from the source tree, not from a table of test names.

A room is a unit of the layer table (tools/import_layers.py: `ragbench/_run`, `ragbench/_nli.py`, `ragbench/api`),
a system's folder `plugins/<s>`, a benchmark's folder `tasks/<b>`, or `metrics/`. Its family folder is tests/ and
the room's name without its underscore (`tests/run/`, `tests/cli/`, `tests/api/`), `tests/systems/<s>/`,
`tests/tasks/<b>/` or `tests/metrics/`; a room whose tests lie in another room's folder says which in `TESTED_IN`,
and `tests/project/` tests the repository as a whole. tests/project/test_test_families.py holds the tree to it:

- every folder of tests/ that holds test files (but support/ and data/) is a room's family, and none lies at the root;
- every room has its family folder, or is in `TESTED_IN` (a room added to the source says where its tests lie);
- a test file that imports private modules (`ragbench._x`) imports at least one of its own family's rooms or of
  the rooms below them in the layer table: one that imports only rooms above or beside its own tests them, and
  lies astray. Its folder is the family of the rooms it imports most (of those most of them are in or below).
  (Most files test one room through others too, results and viewer pages through a run: a file counts as in place
  while any room it imports is its own or below it.)

    python tools/tests_by_family.py           # every folder and test file out of place, one line each (exit 1)
    python tools/tests_by_family.py FILE...   # the family folder each test file belongs in, read from its imports
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from import_layers import DEPTH, imported, modules, parsed, statements, unit

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
NOT_FAMILIES = ("support", "data")  # the modules the tests share; the files they read
WHOLE = "project"  # the family of the repository as a whole: layout, static checks, docs, CI, benchmarks/ scripts

# The rooms with no family folder of their own: the family whose folder holds their tests.
TESTED_IN: dict[str, str] = {
    "ragbench": "api",  # the package itself: its version
    "testing": "api",
    "__main__": "cli",
    "_catalog": "registry",
    "_hookspecs": "registry",
    "_builtin": "registry",
    "_plugin_calls": "registry",
    "_nli": "components",
    "_statistics": "reports",
    "_metric": "metrics",
    "_shared": "metrics",  # answer matching, citations: what metrics and readers share
    "_records": "values",
    "_types": "values",
    "_read_only": "storage",
    "_regular_files": "storage",  # the safe opening: with the files that use it (test_not_a_file_units.py)
    "_class_defaults": "api",  # the contract's class defaults
    "_task": "api",
    "_system": "api",
    "_context": "api",
    "_llm": "engines",
    "_errors": "cli",  # the exit codes and one-line errors
    "_checks": "run",  # the pre-flight
    "_imports": "registry",
    "_ray_connect": "retrieval",
    "_scheduler": "run",
    "_in_flight": "run",
    "_trace_groups": "run",
    "_stop_signals": "run",
    "_children": "run",
    # the systems every run test uses, and the report writer results are made with
    "plugins/vanilla": "run",
    "plugins/closed_book": "run",
    "plugins/recorded": "run",
    "plugins/report_writer": "reports",
    "plugins/traced": "apps",  # `ragbench score --traces`: tested with the trace files it reads (tests/apps)
    "tasks/shared": "tasks/crag",  # the --data checks, options and corpus commands: tested with each benchmark using them
    # FlashRAG's methods, each against FlashRAG's own pipeline (tests/support/flashrag_parity.py)
    **{
        f"plugins/{name}": "systems/flashrag"
        for name in "adaptive_rag corag flare flashrag_mm ircot iter_retgen rearag replug self_ask skr sure".split()
    },
    "tasks/selfrag": "systems/selfrag",  # Self-RAG's benchmarks, with its system
}


def room(module: str) -> str | None:
    """The room of a ragbench module ("_run", "api", "metrics", "plugins/selfrag", "tasks/crag"); None for the
    plugin packages' own modules (`ragbench.tasks`, which finds the benchmarks)."""
    parts = module.split(".")
    if parts[1:2] in (["plugins"], ["tasks"]):
        return f"{parts[1]}/{parts[2]}" if len(parts) > 2 else None
    return unit(module)


@cache
def known_modules() -> frozenset[str]:
    return frozenset(modules())


@cache
def rooms() -> dict[str, str]:
    """Every room of the source, with the unit of the layer table it lies in."""
    return {name: unit(module) for module in known_modules() if (name := room(module))}


def own_folder(name: str) -> str:
    return f"systems/{name.removeprefix('plugins/')}" if name.startswith("plugins/") else name.removeprefix("_")


def family(name: str) -> str:
    """The family folder (relative to tests/) that holds the tests of room `name`."""
    return TESTED_IN.get(name, own_folder(name))


def family_rooms(folder: str) -> list[str]:
    return [name for name in rooms() if family(name) == folder]


def top(folder: str) -> int:
    """The layer of a family's room (of its highest room where the folder is a room's only by `TESTED_IN`)."""
    own = family_rooms(folder)
    principal = [name for name in own if own_folder(name) == folder] or own
    return min(DEPTH[rooms()[name]] for name in principal)


def home(folder: str, name: str) -> bool:
    """Whether room `name` is family `folder`'s own or lies below its room in the layer table."""
    if not family_rooms(folder):  # the project's tests: any room
        return True
    return name in family_rooms(folder) or DEPTH[rooms()[name]] > top(folder)


@cache
def imported_rooms(path: Path) -> list[str]:
    """The rooms of the ragbench modules a test file imports (each module once), anywhere in the file."""
    names = {target for node in statements(parsed(path), True) for target in imported(path.stem, False, node)}
    return [name for module in sorted(names & known_modules()) if (name := room(module))]


def internal(name: str) -> bool:
    return name.startswith("_") and name != "__main__"


def belongs_in(imports: list[str]) -> str | None:
    """The family of these rooms (one a module imported) that holds the most of them, then that the most are in or
    below, then the most specific one; None for none."""
    return max(
        sorted({family(name) for name in imports}),
        key=lambda folder: (
            sum(family(name) == folder for name in imports),
            sum(home(folder, name) for name in imports),
            top(folder),
        ),
        default=None,
    )


def test_files(tests: Path = TESTS) -> list[Path]:
    return sorted(p for p in tests.rglob("test_*.py") if p.relative_to(tests).parts[0] not in NOT_FAMILIES)


def families() -> set[str]:
    return {family(name) for name in rooms()} | {WHOLE}


def folder_problems(tests: Path = TESTS) -> list[str]:
    """Test files at tests/ root, folders of test files that are no room's family, rooms with no family folder."""
    folders = {path.parent.relative_to(tests).as_posix() for path in test_files(tests)}
    problems = [
        f"tests/{path.name}: a test file at tests/ root; put it in its family folder: {where(path)}"
        for path in test_files(tests)
        if path.parent == tests
    ]
    problems += [
        f"tests/{folder}/: no room of the source has this family (its room was removed or renamed?): move its "
        "tests to their room's folder, or name the room in TESTED_IN (tools/tests_by_family.py)"
        for folder in sorted(folders - families() - {"."})
    ]
    problems += [
        f"{name}: TESTED_IN (tools/tests_by_family.py) names it, and no room of the source has this name"
        for name in sorted(TESTED_IN.keys() - rooms().keys())
    ]
    problems += [
        f"{name}: a room with no family folder tests/{family(name)}/: give it one, or say in TESTED_IN "
        "(tools/tests_by_family.py) which family's folder holds its tests"
        for name in sorted(rooms())
        if family(name) not in folders
    ]
    return problems


def where(path: Path) -> str:
    """Where a test file belongs, in words: read from the private modules it imports, else from the plugins."""
    found = imported_rooms(path)
    named = [name for name in found if internal(name)] or [name for name in found if "/" in name or name == "metrics"]
    suggested = belongs_in(named)
    return f"tests/{suggested}/ (by its imports)" if suggested else "the folder of the room it tests"


def astray(paths: Iterable[Path], tests: Path = TESTS) -> dict[Path, str]:
    """The test files (in family folders) that import private modules of rooms above or beside theirs alone, with
    the family their imports say they belong in."""
    found = {}
    for path in paths:
        folder = path.parent.relative_to(tests).as_posix()
        imports = [name for name in imported_rooms(path) if internal(name)]
        if folder in families() and imports and not any(home(folder, name) for name in imports):
            found[path] = str(belongs_in(imports))
    return found


def file_problems(tests: Path = TESTS) -> list[str]:
    problems = []
    for path, suggested in astray(test_files(tests), tests).items():
        imports = ", ".join(sorted({name for name in imported_rooms(path) if internal(name)}))
        problems.append(
            f"{path.relative_to(tests.parent)}: it imports the internals of rooms above or beside "
            f"tests/{path.parent.relative_to(tests).as_posix()}/ alone ({imports}): move it to tests/{suggested}/"
        )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, help="test files to place by their imports")
    options = parser.parse_args(argv)
    if missing := [str(path) for path in options.files if not path.is_file()]:
        parser.error(f"no such file: {', '.join(missing)}")
    for path in options.files:
        print(f"{path}: {where(path)}")
    if options.files:
        return 0
    problems = folder_problems() + file_problems()
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

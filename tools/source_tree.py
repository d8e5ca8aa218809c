"""The source tree docs/internals.md shows, generated from the code and the registry: every module and package
of the core with the first sentence of its docstring, and every task, system and metric folder with its own
docstring and the components the registry has from it, each with its description.

    python tools/source_tree.py            # print the tree
    python tools/source_tree.py --write    # write it into docs/internals.md

tests/project/test_source_tree.py holds the page to what this writes.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from import_layers import INTERNALS, REPO, written

BEGIN, END = "<!-- tree: written by tools/source_tree.py -->", "<!-- tree: end -->"
ROOTS = ("ragbench", "tasks", "plugins", "metrics", "benchmarks", "tools")
PLUGIN_ROOTS = {"ragbench.tasks": "tasks", "ragbench.plugins": "plugins", "ragbench.metrics": "metrics"}
KINDS = (("tasks", "task"), ("systems", "system"), ("metrics", "metric"), ("retrievers", "retriever"))
NAME_WIDTH = 30
LINE_WIDTH = 130  # a line of the tree at most: name column, then the summary cut to fit
SUMMARY_WIDTH = LINE_WIDTH - NAME_WIDTH - 1
# the end of a sentence: not an abbreviation ("e.g.") and not an ellipsis
SENTENCE_END = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\.\.)(?<=[.!?])\s")


def shortened(text: str, width: int = SUMMARY_WIDTH) -> str:
    """`text` on one line, cut at a word before `width` characters (marked with "...")."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    return text[: width - 4].rsplit(" ", 1)[0].rstrip(",;:(") + " ..."


def summary(path: Path) -> str:
    """The first sentence of a module's docstring (of a package's `__init__.py`), "" where it has none."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = docstring.split("\n\n")[0]
    return shortened(SENTENCE_END.split(" ".join(paragraph.split()), maxsplit=1)[0])


def line(depth: int, name: str, text: str) -> str:
    label = "  " * depth + name
    return f"{label:<{NAME_WIDTH}} {text}".rstrip() if text else label


def components() -> dict[str, list[str]]:
    """Plugin file or folder ("tasks/crag/", "metrics/match.py") -> "kind name: description" of each built-in
    component the registry has from it."""
    from ragbench._registry import installed_registry

    registry = installed_registry()
    found: dict[str, list[str]] = {}
    for kind, singular in KINDS:
        for name in registry.names(kind):
            entry = registry.entry(kind, name)
            module = entry.target.split(":")[0]
            package = next((p for p in PLUGIN_ROOTS if module.startswith(p + ".")), None)
            if package is None:
                continue  # a third party's
            parts = module.removeprefix(package + ".").split(".")
            base = REPO / PLUGIN_ROOTS[package] / parts[0]
            place = f"{PLUGIN_ROOTS[package]}/{parts[0]}" + ("/" if base.is_dir() else ".py")
            found.setdefault(place, []).append(f"{singular} {name}: {entry.description}")
    return found


def entries(folder: Path) -> Iterator[Path]:
    """The modules and packages of a folder, by name (a package: a folder with an `__init__.py`)."""
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if path.suffix == ".py" and path.name != "__init__.py" or (path / "__init__.py").exists():
            yield path


def tree(folder: Path, depth: int, registered: dict[str, list[str]]) -> Iterator[str]:
    for path in entries(folder):
        relative = path.relative_to(REPO).as_posix()
        if path.is_dir():
            yield line(depth, path.name + "/", summary(path / "__init__.py"))
            for what in registered.get(relative + "/", ()):
                yield line(depth + 1, "", shortened(what))
            if relative.split("/")[0] == "ragbench":
                yield from tree(path, depth + 1, registered)
        else:
            yield line(depth, path.name, summary(path))
            for what in registered.get(relative, ()):
                yield line(depth + 1, "", shortened(what))


def drawn() -> str:
    """The tree as docs/internals.md shows it, between its markers. Core folders are drawn module by module;
    a plugin folder is drawn once, with the components the registry has from it."""
    registered = components()
    rows = []
    for root in ROOTS:
        init = REPO / root / "__init__.py"
        rows.append(line(0, root + "/", summary(init) if init.exists() else ""))
        rows += tree(REPO / root, 1, registered)
    return "\n".join([BEGIN, "```text", *rows, "```", END])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the tree into docs/internals.md")
    args = parser.parse_args(argv)
    if args.write:
        text = INTERNALS.read_text(encoding="utf-8")
        INTERNALS.write_text(written(text, drawn(), BEGIN, END), encoding="utf-8")
    else:
        print(drawn())
    return 0


if __name__ == "__main__":
    sys.exit(main())

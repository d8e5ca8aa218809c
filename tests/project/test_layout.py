"""The layout shows the architecture (issue 22 point 6): the core grouped by layer, one folder per
system as per benchmark, every folder saying what it owns, no module too long to read
(tests/project/test_source_tree.py holds docs/internals.md's tree to the code)."""

from __future__ import annotations

import ast
from pathlib import Path

from support import paths

REPO = paths.REPO
SOURCES = ("ragbench", "plugins", "tasks", "metrics")
# A module is cut by concept, not by length (issue 92: a cap of 420 lines cut _registry.py, _scheduler.py and
# llm_calls.py mid-idea). One past REVIEW_LINES is read again by a reviewer: kept whole where it holds one concept
# (named in REVIEWED with why), else split where its concepts part.
REVIEW_LINES = 420
REVIEWED: dict[str, str] = {  # path -> the one concept a review found it to hold
    "ragbench/_storage/jsonl.py": "JSONL read and written under one error policy: each reader, writer and text of a "
    "line is half of a pair the other half of which must agree with it (parse what dumps wrote)",
    "ragbench/_storage/rundir.py": "a run folder's files and their lifecycle (start, resume, samples, finalize): each "
    "method keeps one invariant of the folder that the others rely on",
}


def packages() -> list[Path]:
    """The core's folders and the systems' (each task family documents itself in its own modules)."""
    return sorted(p.parent for root in ("ragbench", "plugins") for p in (REPO / root).rglob("__init__.py"))


def test_every_long_module_was_reviewed():
    long = {
        str(p.relative_to(REPO)): n
        for root in SOURCES
        for p in (REPO / root).rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > REVIEW_LINES
        and str(p.relative_to(REPO)) not in REVIEWED
    }
    assert not long, (
        f"modules over {REVIEW_LINES} lines not reviewed: {long}; split each where its concepts part, or name it in "
        "REVIEWED with the one concept it holds"
    )


def test_one_class_per_name():
    """A class name says which class it is: no two modules define classes of one name (issue 70 found two
    `FinishedRun`s, two `Scoring`s; later two `Interval`s, two `RunRecord`s)."""
    where: dict[str, list[str]] = {}
    for root in SOURCES:
        for path in sorted((REPO / root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    where.setdefault(node.name, []).append(str(path.relative_to(REPO)))
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not twice, f"give each of these classes a name of its own: {twice}"


def test_every_folder_says_what_it_owns():
    silent = [
        str(p.relative_to(REPO))
        for p in packages()
        if not ast.get_docstring(ast.parse((p / "__init__.py").read_text(encoding="utf-8")))
    ]
    assert not silent, f"give each of these an __init__.py docstring of what the folder owns: {silent}"


def test_one_folder_per_system():
    flat = sorted(p.name for p in (REPO / "plugins").glob("*.py") if p.name != "__init__.py")
    assert not flat, f"a system lives in plugins/<system>/ (system.py and its parts): {flat}"
    for folder in (REPO / "plugins").iterdir():
        if folder.is_dir() and (folder / "__init__.py").exists():
            assert (folder / "system.py").exists(), f"{folder.name}: its System class belongs in system.py"

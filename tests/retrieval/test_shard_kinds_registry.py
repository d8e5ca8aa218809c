"""Each retriever kind that shards is one folder (ragbench/_retrieval/shard_kinds/KIND/), found through one
registry: its parts name the same kind, and what every kind shares (sharded/, shard_build/) names none."""

from __future__ import annotations

import ast

from ragbench._retrieval.shard_kinds.registry import KINDS, kind_build, shard_searcher, sharded_kind
from ragbench._retrieval.sharded.searcher import ShardSearcher
from support import paths

RETRIEVAL = paths.REPO / "ragbench" / "_retrieval"


def test_each_kind_is_one_folder_whose_parts_name_it():
    folders = sorted(p.name for p in (RETRIEVAL / "shard_kinds").iterdir() if (p / "__init__.py").is_file())
    assert sorted(kind.name for kind in KINDS) == folders
    for kind in KINDS:
        assert sharded_kind(kind.name) is kind
        assert kind.front.name == kind.name, kind
        assert issubclass(kind.search, ShardSearcher)
        assert kind.search.__module__ == f"ragbench._retrieval.shard_kinds.{kind.name}.search"
        assert kind.front.__module__ == f"ragbench._retrieval.shard_kinds.{kind.name}.front"
        if kind.build is not None:
            assert kind.build.name == kind.name and kind_build(kind.name) is kind.build
        for part in (kind.split, kind.foreign):
            assert part is None or part.__module__.startswith(f"ragbench._retrieval.shard_kinds.{kind.name}.")
    assert sharded_kind("splade") is None and kind_build("faiss_index") is None


def test_an_unknown_kind_has_no_shard_search():
    try:
        shard_searcher("splade", None, {})  # type: ignore[arg-type]
    except ValueError as exc:
        assert str(exc) == "no shard search for splade indexes"
    else:
        raise AssertionError("no ValueError")


def test_the_shared_modules_name_no_kind():
    """sharded/ (actors, placement, layout, merge, split) and shard_build/ (driver, workers) hold no kind's name
    in their code: a kind's parts are found through its ShardedKind, never a table keyed by name."""
    names = {kind.name for kind in KINDS}
    found = []
    for folder in ("sharded", "shard_build"):
        for path in sorted((RETRIEVAL / folder).glob("*.py")):
            tree = ast.parse(path.read_text("utf-8"))
            docstrings = {
                id(node.body[0].value)
                for node in ast.walk(tree)
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and node.body
                and isinstance(node.body[0], ast.Expr)
                and isinstance(node.body[0].value, ast.Constant)
            }
            found += [
                f"{folder}/{path.name}:{node.lineno}: {node.value}"
                for node in ast.walk(tree)
                if isinstance(node, ast.Constant) and node.value in names and id(node) not in docstrings
            ]
    assert not found, found

"""Each retriever kind that shards is one object of one class, its `ShardedKind` subclass, named by its retriever's
catalogue entry (`shards:`), the built-in kinds' and a plugin's alike: a built-in kind is one folder
(ragbench/_retrieval/sharding/KIND/) whose one kind class and parts name the same kind, and what every kind shares (sharding/,
sharding/build/, sharding/merged_build/) names none and imports no kind's folder."""

from __future__ import annotations

import ast

import pytest

from ragbench._retrieval.sharding.bm25.kind import Bm25Kind
from ragbench._retrieval.sharding.kind_lookup import sharded_kind, sharded_kinds
from ragbench.api import ConfigError, hookimpl
from ragbench.api.retrieval import BuildsBlocks, BuildsShards, ShardedKind, ShardSearcher, Splits
from ragbench.testing import Registry, installed_registry
from support import paths

RETRIEVAL = paths.REPO / "ragbench" / "_retrieval"
SHARED = ("sharding", "sharding/build", "sharding/merged_build")
KIND_FOLDERS = {"bm25", "dense", "faiss_index", "flashrag_bm25", "lucene_bm25", "tevatron_dense"}  # in sharding/

CAPABILITIES = (Splits, BuildsShards, BuildsBlocks)  # what a kind declares it can do, by its bases


def test_each_built_in_kind_is_one_folder_whose_parts_name_it():
    registry = installed_registry()
    kinds = sharded_kinds(registry)
    folders = sorted(p.name for p in (RETRIEVAL / "sharding").iterdir() if (p / "search.py").is_file())
    assert sorted(kind.name for kind in kinds) == folders
    for kind in kinds:
        folder = f"ragbench._retrieval.sharding.{kind.name}"
        assert sharded_kind(registry, kind.name) is kind
        assert type(kind).__module__.startswith(folder)
        assert type(kind).__bases__ == (Bm25Kind,) or set(type(kind).__bases__) <= {ShardedKind, *CAPABILITIES}
        assert kind.front.name == kind.name, kind
        assert issubclass(kind.search, ShardSearcher)
        assert kind.search.__module__ == f"{folder}.search"
        assert kind.front.__module__ == f"{folder}.front"
        if isinstance(kind, BuildsShards):
            assert kind.shards_front.name == kind.name and kind.shards_front.__module__.startswith(folder)
    assert sharded_kind(registry, "bge") is sharded_kind(registry, "dense")  # an alias: its kind's
    assert sharded_kind(registry, "provided") is None and sharded_kind(registry, "splade") is None
    parts = {kind.name: tuple(isinstance(kind, capability) for capability in CAPABILITIES) for kind in kinds}
    assert parts == {
        "bm25": (True, True, True),
        "lucene_bm25": (True, True, True),
        "flashrag_bm25": (True, True, True),
        "dense": (True, True, True),
        "faiss_index": (True, False, False),
        "tevatron_dense": (False, False, False),
    }


def catalogue(shards: str) -> object:
    class Plugin:
        @staticmethod
        @hookimpl
        def ragbench_catalog():
            return {"retrievers": {"odd": {"target": "ragbench._retrieval.provided:NoRetriever", "shards": shards}}}

    return Plugin


@pytest.mark.parametrize(
    ("shards", "problem"),
    [
        ("no_such_module:KIND", "failed to load: ModuleNotFoundError"),
        ("ragbench._retrieval.sharding.bm25:KIND", "is not the ShardedKind of odd"),  # another kind's
        ("ragbench._retrieval.sharding.kind:ShardedKind", "is not the ShardedKind of odd"),  # not one
    ],
)
def test_an_entry_naming_no_sharded_kind_of_its_retriever_is_refused_in_one_line(shards, problem):
    registry = Registry.discover(plugins=[("odd_plugin", "odd-dist", catalogue(shards))])
    with pytest.raises(ConfigError) as caught:
        sharded_kind(registry, "odd")
    assert f"retriever 'odd' (from odd-dist, entry point odd_plugin): its shards: {shards}" in str(caught.value)
    assert problem in str(caught.value) and "\n" not in str(caught.value)
    assert isinstance(sharded_kind(registry, "bm25"), ShardedKind)  # the other kinds unhidden
    assert "bm25" in [kind.name for kind in sharded_kinds(registry)]


def test_the_shared_modules_name_no_kind_and_import_no_kind_folder():
    """sharding/, sharding/build/ and sharding/merged_build/ hold no kind's name in their code and import no kind's
    folder (sharding/KIND/): a kind's parts are found through the registry's ShardedKind, never a table keyed by
    name."""
    assert {path.parent.name for path in (RETRIEVAL / "sharding").glob("*/search.py")} == KIND_FOLDERS
    names = {kind.name for kind in sharded_kinds(installed_registry())}
    found = []
    for folder in SHARED:
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
            found += [
                f"{folder}/{path.name}:{node.lineno}: imports {node.module}"
                for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and imported_kind_folder(folder, node)
            ]
    assert not found, found


def imported_kind_folder(folder: str, node: ast.ImportFrom) -> bool:
    """Whether the import `node` of a module in RETRIEVAL/`folder` reaches into a kind's folder of sharding/."""
    package = ["_retrieval", *folder.split("/")]
    target = [*package[: len(package) - node.level + 1], *(node.module or "").split(".")] if node.level else []
    return target[:2] == ["_retrieval", "sharding"] and len(target) > 2 and target[2] in KIND_FOLDERS


def test_a_kind_declaring_what_it_can_do_without_its_members_is_refused_when_made():
    class HalfBuilt(BuildsShards):
        name = "half"

        def part_builder(self, folder):
            raise AssertionError("never called")

    with pytest.raises(TypeError, match=r"abstract method.*finish, merge, options"):
        HalfBuilt()

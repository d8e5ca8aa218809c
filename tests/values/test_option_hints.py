"""A plugin option's type is checked from its annotation even where another parameter's annotation names something
imported for the type checker only (`registry: Registry` under TYPE_CHECKING): that one parameter goes unchecked,
not the whole signature (dense's options were listed as `<value ...>` and `chunk_rows=x` reached `int()`)."""

from __future__ import annotations

import sys
import types

import pytest
from click.testing import CliRunner

from ragbench.api import ConfigError, hookimpl
from ragbench.testing import Registry, cli, load_retriever

PLUGIN = """
from __future__ import annotations
from typing import TYPE_CHECKING
from ragbench.api.retrieval import Retriever
if TYPE_CHECKING:
    from somewhere_else import Registry

class Kind(Retriever):
    def __init__(self, size: int = 3, name: str | None = None, *, registry: Registry) -> None:
        self.size, self.name = size, name

    def search(self, queries, k):
        return [[] for _ in queries]
"""


class Catalogue:
    @staticmethod
    @hookimpl
    def ragbench_catalog():
        return {"retrievers": {"hinted": {"target": "hinted_plugin:Kind"}}}


@pytest.fixture
def plugin_class():
    module = types.ModuleType("hinted_plugin")
    exec(compile(PLUGIN, "hinted_plugin.py", "exec"), module.__dict__)
    sys.modules["hinted_plugin"] = module
    yield module.Kind
    del sys.modules["hinted_plugin"]


def test_an_option_is_type_checked_beside_a_parameter_typed_for_the_checker_only(plugin_class):
    registry = Registry.discover(plugins=[("hinted", "hinted-dist", Catalogue)])
    with pytest.raises(ConfigError, match=r"takes an integer for size \(size=<int, default 3>\)"):
        load_retriever("hinted", {"size": "x"}, registry=registry)
    with pytest.raises(ConfigError, match=r"name=<str/null, default None>"):
        load_retriever("hinted", {"nme": "a"}, registry=registry)
    assert isinstance(retriever := load_retriever("hinted", {"size": 5}, registry=registry), plugin_class)
    assert retriever.size == 5


def test_dense_retrievers_options_are_checked_by_type(tmp_path):
    args = ["--tasks", "demo", "--system", "vanilla", "--retriever", "dense", "--retriever-arg", "chunk_rows=x"]
    result = CliRunner().invoke(cli, [*args, "--limit", "1", "--no-progress", "--output", str(tmp_path / "run")])
    assert result.exit_code == 2 and not (tmp_path / "run").exists()
    assert result.stderr.strip().splitlines() == [
        "ragbench: error: --retriever-arg chunk_rows=x: retriever dense takes an integer for chunk_rows "
        "(chunk_rows=<int, default 32768>)"
    ]

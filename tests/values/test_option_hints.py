"""A plugin option's type is checked from its annotation even where another parameter's annotation names something
imported for the type checker only (`registry: Registry` under TYPE_CHECKING): that one parameter goes unchecked,
not the whole signature (dense's options were listed as `<value ...>` and `chunk_rows=x` reached `int()`)."""

from __future__ import annotations

import sys
import types

import pytest
from click.testing import CliRunner

from ragbench._values.options import construct
from ragbench.api import ConfigError
from ragbench.testing import cli

PLUGIN = """
from __future__ import annotations
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from somewhere_else import Registry

class Kind:
    def __init__(self, size: int = 3, name: str | None = None, *, registry: Registry) -> None:
        self.size, self.name = size, name
"""


@pytest.fixture
def plugin_class():
    module = types.ModuleType("hinted_plugin")
    exec(compile(PLUGIN, "hinted_plugin.py", "exec"), module.__dict__)
    sys.modules["hinted_plugin"] = module
    yield module.Kind
    del sys.modules["hinted_plugin"]


def test_an_option_is_type_checked_beside_a_parameter_typed_for_the_checker_only(plugin_class):
    with pytest.raises(ConfigError, match=r"takes an integer for size \(size=<int, default 3>\)"):
        construct(plugin_class, {"size": "x"}, "--retriever-arg", injected={"registry": None})
    with pytest.raises(ConfigError, match=r"name=<str/null, default None>"):
        construct(plugin_class, {"nme": "a"}, "--retriever-arg", injected={"registry": None})
    assert construct(plugin_class, {"size": 5}, "--retriever-arg", injected={"registry": None}).size == 5


def test_dense_retrievers_options_are_checked_by_type(tmp_path):
    args = ["--tasks", "demo", "--system", "vanilla", "--retriever", "dense", "--retriever-arg", "chunk_rows=x"]
    result = CliRunner().invoke(cli, [*args, "--limit", "1", "--no-progress", "--output", str(tmp_path / "run")])
    assert result.exit_code == 2 and not (tmp_path / "run").exists()
    assert result.stderr.strip().splitlines() == [
        "ragbench: error: --retriever-arg chunk_rows=x: retriever dense takes an integer for chunk_rows "
        "(chunk_rows=<int, default 32768>)"
    ]

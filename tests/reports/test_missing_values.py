"""A value a plugin needs and may lack ends in one line naming the fix, not in an AttributeError or a TypeError
later: the retriever of a context that has none, a judger folder never given, a "module:attr" option that names
something not callable."""

import asyncio

import pytest

from ragbench.api import ConfigError, Example
from ragbench.api.data import load_callable
from ragbench.api.flashrag import judger_folder
from ragbench.plugins.iter_retgen.system import IterRetGen
from ragbench.testing import ScriptedLLM, make_context


def test_a_searching_system_without_a_retriever_names_the_declaration_that_gives_one():
    ctx = make_context("nq_open_flashrag", ScriptedLLM("Paris"))
    ctx.retriever = None  # as a run gives a system that does not declare `retrieves`
    with pytest.raises(ValueError, match=r"no retriever: .*SystemDeclaration\(retrieves=True\)"):
        asyncio.run(IterRetGen().run(Example("q1", "Where is the Louvre?"), ctx))


def test_the_retriever_a_context_has_is_the_required_one():
    ctx = make_context("nq_open_flashrag", ScriptedLLM("Paris"))
    assert ctx.required_retriever() is ctx.retriever


def test_a_judger_folder_never_given_is_one_line():
    with pytest.raises(ConfigError, match="^skr judger_model is not set: pass the local folder"):
        judger_folder(None, "skr judger_model")


def test_an_option_naming_something_not_callable_is_one_line():
    with pytest.raises(ConfigError, match="^embedder: 'json:decoder' is a module, not something to call; give"):
        load_callable("json:decoder", "embedder", "give package.module:function")
    assert load_callable("json:dumps", "embedder", "give package.module:function")([1]) == "[1]"

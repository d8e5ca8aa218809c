"""docs/internals.md's source tree is the one tools/source_tree.py draws from the code and the registry: every
core module and package with its docstring's first sentence, every built-in task, system and metric with the
folder it lives in."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from hypothesis import given
from hypothesis import strategies as st

from ragbench.testing import installed_registry
from support import paths

REPO = paths.REPO


def load_tool(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # source_tree imports import_layers by name; dataclasses look their module up
    spec.loader.exec_module(module)
    return module


load_tool("import_layers")
source_tree = load_tool("source_tree")


def test_the_page_shows_the_tree_the_code_and_the_registry_make():
    internals = source_tree.INTERNALS.read_text(encoding="utf-8")
    assert source_tree.written(internals, source_tree.drawn(), source_tree.BEGIN, source_tree.END) == internals, (
        "docs/internals.md's source tree is stale: run python tools/source_tree.py --write"
    )


def test_the_tree_names_every_core_module_and_every_built_in_component():
    drawn = source_tree.drawn()
    names = {line.split()[0] for line in drawn.splitlines()[2:-2] if line.strip()}
    core = {path.name for path in (REPO / "ragbench").rglob("*.py") if path.name != "__init__.py"}
    assert core - names == set()
    registry = installed_registry()
    listed = {
        (kind, name)
        for kind, singular in source_tree.KINDS
        for name in registry.names(kind)
        if f"{singular} {name}: " in drawn
    }
    built_in = {
        (kind, name)
        for kind, _ in source_tree.KINDS
        for name in registry.names(kind)
        if registry.entry(kind, name).target.startswith(("ragbench.tasks.", "ragbench.plugins.", "ragbench.metrics."))
    }
    assert built_in and built_in - listed == set()


def test_a_summary_is_the_first_sentence_on_one_line(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""Reads a file, e.g. a JSONL\nfile of records. The rest is detail."""\n', encoding="utf-8")
    assert source_tree.summary(module) == "Reads a file, e.g. a JSONL file of records."
    module.write_text('"""' + "word " * 40 + '"""\n', encoding="utf-8")
    assert source_tree.summary(module).endswith("word ...") and len(source_tree.summary(module)) <= 100


WORDS = st.lists(st.text(st.sampled_from("ab,;:(.\u00e9"), min_size=1, max_size=15), max_size=40)
SPACES = st.sampled_from([" ", "\n", "  ", "\n\n    "])


@given(
    st.tuples(WORDS, SPACES).map(lambda words_space: words_space[1].join(words_space[0])),
    st.integers(min_value=8, max_value=140),
)
def test_a_shortened_text_is_one_line_within_its_width_and_starts_as_the_text_does(text, width):
    short = source_tree.shortened(text, width)
    joined = " ".join(text.split())
    assert "\n" not in short and len(short) <= width
    assert (
        short == joined
        if len(joined) <= width
        else (short.endswith(" ...") and joined.startswith(short.removesuffix(" ...")))
    )

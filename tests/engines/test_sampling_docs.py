"""Every keyword of `ctx.llm.generate` / `chat` - `step`, `images` and every field of `Sampling` - is documented in
`Sampling`'s docstring, in `LLM.generate`'s and in docs/engines.md's reference table."""

from __future__ import annotations

import dataclasses
import inspect
import re

from ragbench.api.engines import Sampling
from ragbench.testing import make_context
from support import paths

REFERENCE = paths.REPO / "docs" / "engines.md"
FIELDS = [f.name for f in dataclasses.fields(Sampling)]
LLM = type(make_context("demo").llm)  # the class of `ctx.llm`, whose methods a system calls


def test_every_sampling_field_is_described_in_its_docstring():
    described = re.findall(r"^    (\w+): ", Sampling.__doc__, flags=re.MULTILINE)
    assert described == FIELDS


def test_generate_and_chat_name_every_keyword_they_take():
    for method, keywords in ((LLM.generate, ["step", "images"]), (LLM.chat, ["step", "tools", "tool_choice"])):
        assert [p for p in inspect.signature(method).parameters if p not in ("self", "sampling")][1:] == keywords
    assert all(f"{name}: " in inspect.getdoc(LLM.chat) for name in ("tools", "tool_choice"))
    listed = inspect.getdoc(LLM.generate)
    assert all(f"{name}: " in listed for name in ("step", "images"))
    assert all(f"{name}," in listed or f"{name} (" in listed for name in FIELDS)


def test_the_engines_page_has_a_row_for_every_keyword():
    rows = re.findall(r"^\| `(\w+)` \|", REFERENCE.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert rows == ["step", "images", *FIELDS]

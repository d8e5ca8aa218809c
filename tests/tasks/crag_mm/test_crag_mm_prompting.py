"""The example agent's messages and search-results block against the released code (VlmAgent._prepare_messages,
get_rag_context), recorded in tests/data/parity/crag_mm_agent.json (its "how")."""

from __future__ import annotations

import json

import pytest

from conftest import TEST_DATA
from ragbench.api import Document, Example
from ragbench.tasks.crag_mm.prompting import CragMMPrompting, agent_messages, web_context

CASES = json.loads((TEST_DATA / "parity" / "crag_mm_agent.json").read_text(encoding="utf-8"))["cases"]
IMAGE_MESSAGE = {"role": "user", "content": [{"type": "image"}]}


def docs_of(results):
    return [
        Document(id=str(i), title=r["page_name"], text=r["page_snippet"], url=r["page_url"])
        for i, r in enumerate(results)
    ]


@pytest.mark.parametrize("case", CASES, ids=[c["query"] for c in CASES])
def test_messages_equal_the_example_agents_but_the_image_message(case):
    rag = web_context(case["query"], docs_of(case["results"])) if case["results"] is not None else ""
    assert rag == case["rag_context"]
    upstream = case["messages"]
    assert upstream[1] == IMAGE_MESSAGE  # the engine sends the example's image (Example.images)
    assert agent_messages(case["query"], case["history"], rag) == [upstream[0], *upstream[2:]]
    assert agent_messages(case["query"], case["history"], rag, "closed") == case["closed_messages"]


def test_the_task_prompting_sends_them_with_the_examples_history():
    case = CASES[1]
    example = Example(id="t2", question=case["query"], gold={"answers": ["Ming."]}, turns=case["history"])
    upstream = case["messages"]
    assert CragMMPrompting().build_prompt(example) == [upstream[0], *upstream[2:]]
    assert CragMMPrompting("closed").build_prompt(example) == case["closed_messages"]

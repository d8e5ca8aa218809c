"""The example agent's messages and search-results block against the released code (VlmAgent._prepare_messages,
GPTAgent._prepare_messages, get_rag_context), recorded in tests/data/parity/crag_mm_agent.json (its "how"): the
image message included, its picture compared by digest."""

from __future__ import annotations

import base64
import hashlib
import io
import json

import pytest

from conftest import TEST_DATA
from ragbench.api import Document, Example, Image
from ragbench.tasks.crag_mm.prompting import CragMMPrompting, agent_messages, search_results
from support.crag_mm_helpers import png, turn_dicts

CASES = json.loads((TEST_DATA / "parity" / "crag_mm_agent.json").read_text(encoding="utf-8"))["cases"]
IMAGE = Image.of(png((200, 30, 60), (16, 12)))  # the driver's picture


def docs_of(results):
    return [
        Document(id=str(i), title=r["page_name"], text=r["page_snippet"], url=r["page_url"])
        for i, r in enumerate(results)
    ]


def rgb_sha256(image: Image) -> str:
    from PIL import Image as PILImage

    return hashlib.sha256(PILImage.open(io.BytesIO(image.data)).convert("RGB").tobytes()).hexdigest()


def data_url(image: Image) -> str:
    return f"data:{image.media_type};base64,{base64.b64encode(image.data).decode('ascii')}"


def as_upstream(messages, agent: str) -> tuple[list, list[Image]]:
    """ragbench's messages in upstream's form, and the pictures they send: VlmAgent's image part is {"type":
    "image"} (its picture goes beside, as vLLM's multi_modal_data), the API agents' a JPEG data URL."""
    out, images = [], []
    for message in turn_dicts(messages):
        content = message["content"]
        if isinstance(content, list):
            images += [part["image"] for part in content]
            content = [
                {"type": "image"}
                if agent == "open"
                else {"type": "image_url", "image_url": {"url": data_url(p["image"])}}
                for p in content
            ]
        out.append({**message, "content": content})
    return out, images


@pytest.mark.parametrize("case", CASES, ids=[c["query"] for c in CASES])
def test_messages_equal_the_example_agents_image_included(case):
    assert hashlib.sha256(IMAGE.data).hexdigest() == case["image_png_sha256"]
    rag = search_results(case["query"], docs_of(case["results"])) if case["results"] is not None else ""
    assert rag == case["rag_context"]
    messages, images = as_upstream(agent_messages(case["query"], case["history"], rag, "open", IMAGE), "open")
    assert messages == case["messages"]
    assert [rgb_sha256(image) for image in images] == [case["image_rgb_sha256"]]  # what multi_modal_data holds
    closed, images = as_upstream(agent_messages(case["query"], case["history"], rag, "closed", IMAGE), "closed")
    assert closed == case["closed_messages"]
    sent = case["closed_messages"][1]["content"][0]["image_url"]["url"]
    assert images[0].media_type == "image/jpeg"
    assert images[0].digest == hashlib.sha256(base64.b64decode(sent.split(",", 1)[1])).hexdigest()


def test_the_task_prompting_sends_them_with_the_examples_history_and_image():
    case = CASES[1]
    example = Example(
        id="t2", question=case["query"], gold={"answers": ["Ming."]}, turns=case["history"], images=(IMAGE,)
    )
    for agent, recorded in (("open", "messages"), ("closed", "closed_messages")):
        assert as_upstream(CragMMPrompting(agent).build_prompt(example), agent)[0] == case[recorded]

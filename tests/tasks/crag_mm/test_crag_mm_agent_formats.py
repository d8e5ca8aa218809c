"""`agent=pixtral|qwen|internvl` against the released PixtralAgent, QwenAgent and InternVLAgent, request for request:
tests/data/parity/crag_mm_agent_formats.json (its "how"; recorder beside it) holds what each handed vLLM for
crag_mm_agent.json's cases, each with a picture of tests/support/crag_mm_pictures.py. Pixtral's is mistral_common's
text, compared with ragbench's chat written in that form; Qwen's and InternVL's the messages before their
templates, their image turns compared by the pictures vLLM gets."""

from __future__ import annotations

import hashlib
import io
import json

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT, TEST_DATA
from ragbench.api import Example, Image
from ragbench.api.engines import Request
from ragbench.tasks.crag_mm.agent_formats import QWEN_MAX_PIXELS, QWEN_MIN_PIXELS, as_jpeg, qwen_resize
from ragbench.tasks.crag_mm.prompting import agent_messages
from ragbench.tasks.crag_mm.synthetic import write_dataset
from ragbench.tasks.crag_mm.task import CragMMMulti
from ragbench.testing import installed_registry
from support.crag_mm_helpers import case_rows, fill_image_cache, loader_cases, tokenizer_dir, turn_dicts
from support.crag_mm_pictures import PICTURES, gradient_png

PARITY = TEST_DATA / "parity"
CASES = json.loads((PARITY / "crag_mm_agent.json").read_text(encoding="utf-8"))["cases"]
RECORDED = json.loads((PARITY / "crag_mm_agent_formats.json").read_text(encoding="utf-8"))
IMAGES = [Image.of(gradient_png(size, mode)) for size, mode in PICTURES]
ROWS = list(enumerate(CASES))


def picture_record(image: Image) -> dict:
    """What vLLM's multi_modal_data gets, as the recorder writes it: size, mode and pixels' sha256."""
    from PIL import Image as PILImage

    picture = PILImage.open(io.BytesIO(image.data))
    return {"size": list(picture.size), "mode": picture.mode, "sha256": hashlib.sha256(picture.tobytes()).hexdigest()}


def sent(agent: str, i: int) -> list[dict]:
    case = CASES[i]
    return turn_dicts(agent_messages(case["query"], case["history"], case["rag_context"], agent, IMAGES[i]))


def split_images(messages: list[dict], marker: object) -> tuple[list[dict], list[Image]]:
    """The messages with each image part as `marker`, and the images."""
    out, images = [], []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            images += [part["image"] for part in content if part["type"] == "image"]
            content = [marker if part["type"] == "image" else part for part in content]
        out.append({**message, "content": content})
    return out, images


def mistral_v3_text(messages: list[dict]) -> str:
    """A chat as mistral_common's v3 (tekken) tokenizer writes one normalized: <s>, [INST]user[/INST], assistant</s>;
    an image part as [IMG]."""
    text = "<s>"
    for message in messages:
        content = message["content"]
        body = content if isinstance(content, str) else "".join(p.get("text", "[IMG]") for p in content)
        text += f"[INST]{body}[/INST]" if message["role"] == "user" else f"{body}</s>"
    return text


@pytest.mark.parametrize("i,case", ROWS, ids=[c["query"] for c in CASES])
def test_pixtral_prompt_is_mistral_commons_text_of_pixtral_agents_chat(i, case):
    recorded = RECORDED["pixtral"][i]
    messages, images = split_images(sent("pixtral", i), {"type": "image"})
    assert mistral_v3_text(messages) == recorded["prompt"]
    assert [picture_record(image) for image in images] == recorded["images"]  # the picture as given


def flat(messages: list[dict]) -> list[dict]:
    """Each turn of one part as that part: a text part as its text (how ragbench's engine renders a text turn, and
    QwenAgent's `_build_text_content` writes one)."""
    out = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            [part] = content
            content = part["text"] if isinstance(part, dict) and part.get("type") == "text" else part
        out.append({**message, "content": content})
    return out


@pytest.mark.parametrize("i,case", ROWS, ids=[c["query"] for c in CASES])
def test_qwen_messages_and_resized_picture_equal_qwen_agents(i, case):
    recorded = RECORDED["qwen"][i]
    [image_turn] = [m for m in recorded["messages"] if isinstance(m["content"], list) and "image" in m["content"][0]]
    [part] = image_turn["content"]
    assert (part["min_pixels"], part["max_pixels"]) == (QWEN_MIN_PIXELS, QWEN_MAX_PIXELS)
    assert part["image"] == f"sha256:{as_jpeg(IMAGES[i]).digest}"  # the data URL's JPEG
    messages, images = split_images(sent("qwen", i), part)
    assert flat(messages) == flat(recorded["messages"])
    assert [picture_record(image) for image in images] == recorded["images"]  # process_vision_info's


@pytest.mark.parametrize("i,case", ROWS, ids=[c["query"] for c in CASES])
def test_internvl_messages_equal_internvl_agents(i, case):
    recorded = RECORDED["internvl"][i]
    messages, images = split_images(sent("internvl", i), "<image>")
    assert flat(messages) == recorded["messages"]
    assert [picture_record(image) for image in images] == recorded["images"]  # the picture as given


@given(st.integers(1, 8000), st.integers(1, 8000))
def test_qwen_resize_keeps_qwens_bounds_and_refuses_what_upstream_refuses(height, width):
    """Sides are multiples of 28, at least one block each, within Qwen's pixel bounds; a picture past qwen_vl_utils'
    aspect limit (200) is a ValueError as upstream's (the fixture pins the exact sizes upstream gives, one picture
    per branch)."""
    if max(height, width) / min(height, width) > 200:
        with pytest.raises(ValueError, match="aspect ratio of at most 200"):
            qwen_resize(height, width)
        return
    resized_h, resized_w = qwen_resize(height, width)
    assert resized_h % 28 == 0 and resized_w % 28 == 0 and resized_h >= 28 and resized_w >= 28
    assert QWEN_MIN_PIXELS <= resized_h * resized_w <= QWEN_MAX_PIXELS


def test_their_sampling_is_the_tasks():
    """All three send VlmAgent's sampling (Pixtral leaves skip_special_tokens at vLLM's default, true)."""
    registry = yaml.safe_load((ROOT / "ragbench" / "registry.yaml").read_text(encoding="utf-8"))
    args = registry["tasks"]["crag_mm_single"]["defaults"]["system_args"]
    ours = {"temperature": args["temperature"], "top_p": args["top_p"], "max_tokens": args["max_tokens"]}
    for agent in ("pixtral", "qwen", "internvl"):
        for call in RECORDED[agent]:
            assert {"skip_special_tokens": True, **call["sampling"]} == {**ours, "skip_special_tokens": True}


# user_config.py's MODEL_KEYWORD_TO_AGENT, in its order (the first keyword the model's name holds), as agent= names
UPSTREAM_AGENT_BY_KEYWORD = (
    ("pixtral", "pixtral"),
    ("claude", "closed"),
    ("gpt", "closed"),
    ("gemini", "closed"),
    ("llama", "open"),
    ("internvl", "internvl"),
    ("qwen", "qwen"),
)


def test_the_paper_rows_pick_the_agent_upstream_picks_by_the_models_name():
    rows = {name: row for name, row in installed_registry().reproductions.items() if name.startswith("crag-mm.")}
    picked = {}
    for name, row in rows.items():
        if "run" in row:
            model = row["run"]["model"].split(":", 1)[1].lower()
            expected = next(agent for keyword, agent in UPSTREAM_AGENT_BY_KEYWORD if keyword in model)
            picked[name] = (row["run"]["task_args"].get("agent", "open"), expected)
    assert {got for got, _ in picked.values()} == {"open", "closed", "pixtral", "qwen", "internvl"}
    assert all(got == expected for got, expected in picked.values()), picked


@pytest.mark.parametrize("agent", ["pixtral", "qwen"])
def test_a_run_with_the_agent_sends_its_form(tmp_path, agent):
    """closed_book on crag_mm_multi (synthetic.py's rows of the loader cases, history included): each request is the
    example's `agent_messages` in the agent's form, pictures by digest."""
    from ragbench.testing import ScriptedLLM, run_eval

    cases = loader_cases()
    data = write_dataset(tmp_path / "data", case_rows(cases["multi"]))
    task_args = {
        "tokenizer": tokenizer_dir(),
        "image_cache": str(fill_image_cache(tmp_path / "cache", cases["cached"])),
    }
    system = ScriptedLLM("I don't know")
    run_eval(
        "crag_mm_multi",
        "closed_book",
        system,
        data=data,
        judges=[ScriptedLLM("")],
        task_args={**task_args, "agent": agent},
    )
    found = [e for e in CragMMMulti(data_path=data, **task_args).examples() if isinstance(e, Example)]
    expected = [Request.chat(agent_messages(e.question, list(e.turns or []), "", agent, e.images[0])) for e in found]

    def sent(requests):
        return sorted((str(r.messages), [image.digest for image in r.sent_images]) for r in requests)

    assert sent(system.requests) == sent(expected)
    assert len(system.requests) == len(found) > 1

"""Images through every layer of an LLM call: the request (content parts, a prompt's images), its cache key and
record (by digest, never by path), replay, the scheduler's batches, each hosted vendor's body, and the pre-flight's
refusal of a model that takes no images."""

from __future__ import annotations

import asyncio
import base64
import io
import json

import pytest
from PIL import Image as PILImage

from ragbench._engines.chat_messages import chat_messages
from ragbench._engines.hosted.anthropic_messages import message_arguments
from ragbench._engines.hosted.gemini_contents import content_arguments
from ragbench._engines.hosted.openai import OpenAIEngine
from ragbench._engines.hosted.openai_responses_api import responses_arguments
from ragbench._engines.replay import ReplayEngine
from ragbench._engines.scripted import ScriptedEngine
from ragbench._run.plan.engine_checks import engine_needs, needs_problems
from ragbench._scheduler import Scheduler
from ragbench._values.engine_needs import EngineNeeds
from ragbench._values.llm_request import Request
from ragbench._values.llm_responses import Response
from ragbench.api import Image, user_turn


def png(color: tuple[int, int, int] = (255, 0, 0)) -> bytes:
    buffer = io.BytesIO()
    PILImage.new("RGB", (4, 4), color).save(buffer, format="PNG")
    return buffer.getvalue()


RED, BLUE = png(), png((0, 0, 255))


def asked(image: object, text: str = "What is this?") -> Request:
    return Request.chat([{"role": "system", "content": "Be brief."}, user_turn(text, [image])])


# -- the request, its cache key and its record ---------------------------------------------------------------------


def test_requests_without_images_keep_their_cache_keys():
    # the keys main computed before images existed (run there once; a change here would orphan every cache)
    tool_chat = Request.chat(
        [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
        ],
        tools=[{"name": "f", "parameters": {}}],
    )
    assert (
        Request(prompt="Q: who?").cache_key("hf:m")
        == "fe543d76724888c3848b34ca47d9341e03d25748d077950a55f6a01e76ab45f6"
    )
    chat = Request.chat([{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}])
    assert chat.cache_key("hf:m") == "8a62872c89df1a4e7415bad8f510dc05e2ec6a0e68b82940dd6737aec926d58a"
    assert tool_chat.cache_key("hf:m") == "6477635a69b2d1d1430698e1b6145fce548603c6a0a98a4c3c86fca15b805d48"
    assert tool_chat.messages[0].parts == ()  # a list of text parts stays the JSON text it was


def test_an_image_is_keyed_by_its_bytes_never_its_path(tmp_path):
    one, two, other = tmp_path / "a.png", tmp_path / "b.png", tmp_path / "c.png"
    one.write_bytes(RED), two.write_bytes(RED), other.write_bytes(BLUE)
    key = asked(str(one)).cache_key("e")
    assert asked(two).cache_key("e") == key  # the same bytes under another path: the same request
    assert asked(RED).cache_key("e") == key
    assert asked(other).cache_key("e") != key  # other bytes: another request
    assert asked(str(one), "What colour?").cache_key("e") != key
    assert asked(str(one)).cache_key("e") != Request.chat(
        [{"role": "system", "content": "Be brief."}, user_turn("What is this?")]
    ).cache_key("e")
    prompt = Request(prompt="<image> What?", images=(Image.of(one),))
    assert prompt.cache_key("e") == Request(prompt="<image> What?", images=(Image.of(two),)).cache_key("e")
    assert prompt.cache_key("e") != Request(prompt="<image> What?").cache_key("e")
    assert prompt.cache_key("e") != Request(prompt="<image> What?", images=(Image.of(BLUE),)).cache_key("e")


def test_the_record_holds_each_image_by_digest_and_no_path(tmp_path):
    (tmp_path / "a.png").write_bytes(RED)
    record = asked(tmp_path / "a.png").to_dict()
    image = Image.of(RED)
    assert record["messages"][1]["content"] == [
        {"type": "image", "image": {"sha256": image.digest, "media_type": "image/png", "bytes": len(RED)}},
        {"type": "text", "text": "What is this?"},
    ]
    assert str(tmp_path) not in json.dumps(record)
    prompt = Request(prompt="<image> What?", images=(Image.of(tmp_path / "a.png"),)).to_dict()
    assert prompt["images"] == [{"sha256": image.digest, "media_type": "image/png", "bytes": len(RED)}]
    assert str(tmp_path) not in json.dumps(prompt)


def test_content_parts_keep_their_order_and_read_data_urls():
    url = "data:image/png;base64," + base64.b64encode(BLUE).decode()
    request = Request.chat(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "before"},
                    {"type": "image", "image": RED},
                    {"type": "image_url", "image_url": {"url": url}},
                    {"type": "text", "text": "after"},
                ],
            }
        ]
    )
    turn = request.messages[0]
    assert [p if isinstance(p, str) else p.digest for p in turn.parts] == [
        "before",
        Image.of(RED).digest,
        Image.of(BLUE).digest,
        "after",
    ]
    assert turn.content == "before\nafter"  # what a text-only reader (a trace, a scripted rule) sees
    assert request.sent_images == (Image.of(RED), Image.of(BLUE))
    with pytest.raises(ValueError, match="data URL"):
        Request.chat([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/a.png"}}]}])
    with pytest.raises(ValueError, match="go with a prompt"):
        Request(messages=(("user", "hi"),), images=(Image.of(RED),))


def test_an_image_counts_in_the_request_length():
    assert (
        asked(RED).text_length()
        > Request.chat([{"role": "system", "content": "Be brief."}, user_turn("What is this?")]).text_length() + 1000
    )


# -- replay and the scheduler ---------------------------------------------------------------------------------------


def test_replay_matches_a_recorded_call_by_the_digests_of_its_images(tmp_path):
    (tmp_path / "a.png").write_bytes(RED)
    (tmp_path / "b.png").write_bytes(RED)
    recorded = asked(tmp_path / "a.png")
    line = {**recorded.to_dict(), "response": "a red square"}
    prompt = Request(prompt="<image> What?", images=(Image.of(RED),))
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps(line) + "\n" + json.dumps({**prompt.to_dict(), "response": "red"}) + "\n")
    engine = ReplayEngine(str(path))
    same, other, other_prompt = engine.generate(
        [asked(tmp_path / "b.png"), asked(BLUE), Request(prompt="<image> What?", images=(Image.of(BLUE),))]
    )
    assert isinstance(same, Response) and same.text == "a red square"  # another path, the same bytes
    assert not isinstance(other, Response) and not isinstance(other_prompt, Response)  # other bytes: a miss
    assert engine.generate([prompt])[0].text == "red"


def test_the_scheduler_batches_calls_that_carry_images():
    engine = ScriptedEngine("echo", batch_size=8)
    seen: list[int] = []
    generate = engine.generate

    def counted(requests):
        seen.append(len(requests))
        return generate(requests)

    engine.generate = counted

    async def run():
        scheduler = Scheduler()
        try:
            calls = [asked(png((i, 0, 0)), f"answer {i}") for i in range(6)]
            return await asyncio.gather(*(scheduler.submit(engine, r) for r in [*calls, Request(prompt="answer t")]))
        finally:
            await scheduler.close()

    answers = asyncio.run(run())
    assert [a.text for a in answers] == [*(f"answer {i}" for i in range(6)), "answer t"]
    assert sum(seen) == 7 and len(seen) <= 2  # with the text request, in one or two batches


# -- each vendor's body ------------------------------------------------------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def test_the_openai_chat_api_gets_image_url_parts_with_a_data_url(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    engine = OpenAIEngine("gpt-4o-mini")
    chat, args = engine.call_arguments(asked(RED))
    assert chat and args["messages"] == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64(RED)}"}},
                {"type": "text", "text": "What is this?"},
            ],
        },
    ]
    _, args = engine.call_arguments(Request(prompt="What?", images=(Image.of(BLUE),)))
    assert args["messages"][0]["content"][0]["image_url"]["url"] == f"data:image/png;base64,{b64(BLUE)}"


def test_the_responses_api_gets_input_image_parts():
    args = responses_arguments(asked(RED), "gpt-4.1")
    assert args["instructions"] == "Be brief."
    assert args["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_image", "image_url": f"data:image/png;base64,{b64(RED)}"},
                {"type": "input_text", "text": "What is this?"},
            ],
        }
    ]


def test_anthropic_gets_image_blocks_with_a_base64_source():
    args = message_arguments(asked(RED), "claude-sonnet-4-5")
    assert args["system"] == "Be brief."
    assert args["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(RED)}},
                {"type": "text", "text": "What is this?"},
            ],
        }
    ]


def test_gemini_gets_inline_data_parts_the_sdk_takes():
    types = pytest.importorskip("google.genai.types")

    contents, config = content_arguments(asked(RED))
    assert config["system_instruction"] == "Be brief."
    assert contents == [
        {"role": "user", "parts": [{"inline_data": {"mime_type": "image/png", "data": RED}}, {"text": "What is this?"}]}
    ]
    sdk = types.Content.model_validate(contents[0])  # what the SDK sends: the bytes base64, as Part.from_bytes
    assert sdk.parts[0] == types.Part.from_bytes(data=RED, mime_type="image/png")
    assert sdk.model_dump(mode="json")["parts"][0]["inline_data"]["data"] == base64.urlsafe_b64encode(RED).decode()


@pytest.mark.parametrize("vendor", ["openai", "anthropic", "gemini"])
def test_each_vendor_sdk_sends_the_image_as_its_api_documents(vendor, monkeypatch):
    """Over the wire, through the vendor's own SDK, to the fake server of its API (tests/engines/test_engine_*.py)."""
    import test_engine_anthropic
    import test_engine_gemini
    from test_engine_openai import FakeServer, generate

    pytest.importorskip({"openai": "openai", "anthropic": "anthropic", "gemini": "google.genai"}[vendor])
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    answers = {"anthropic": test_engine_anthropic.echo, "gemini": test_engine_gemini.echo}
    server = FakeServer(answer=answers.get(vendor))
    try:
        engine = {
            "openai": lambda: OpenAIEngine("gpt-4o-mini", base_url=server.base_url, max_retries=0),
            "anthropic": lambda: test_engine_anthropic.engine(server),
            "gemini": lambda: test_engine_gemini.engine(server),
        }[vendor]()
        generate(engine, asked(RED))
        body = server.requests[0]["body"]
    finally:
        server.stop()
    if vendor == "openai":  # platform.openai.com/docs/guides/images-vision: an image_url part, a base64 data URL
        assert body["messages"][1]["content"] == [
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64(RED)}"}},
            {"type": "text", "text": "What is this?"},
        ]
    elif vendor == "anthropic":  # docs.anthropic.com/en/docs/build-with-claude/vision: a base64 image block
        assert body["messages"][0]["content"] == [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(RED)}},
            {"type": "text", "text": "What is this?"},
        ]
    else:  # ai.google.dev/gemini-api/docs/image-understanding: an inline_data part, base64, and its mime type
        image, text = body["contents"][0]["parts"]
        inline = image.get("inlineData") or image["inline_data"]
        assert base64.b64decode(inline["data"], altchars=b"-_") == RED
        assert (inline.get("mimeType") or inline["mime_type"]) == "image/png" and text == {"text": "What is this?"}


def test_the_batch_apis_send_the_same_bodies(monkeypatch):
    from ragbench._engines.hosted.anthropic import AnthropicEngine
    from ragbench._engines.hosted.batch_anthropic import AnthropicBatches
    from ragbench._engines.hosted.batch_openai import OpenAIBatches

    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    openai = OpenAIEngine("gpt-4o-mini")
    url, line = OpenAIBatches(openai).line(asked(RED), "c1")
    assert (
        url == "/v1/chat/completions" and line["body"]["messages"] == openai.call_arguments(asked(RED))[1]["messages"]
    )
    anthropic = AnthropicEngine("claude-sonnet-4-5")
    _, line = AnthropicBatches(anthropic).line(asked(RED), "c2")
    assert line["params"]["messages"] == message_arguments(asked(RED), "claude-sonnet-4-5")["messages"]
    assert line["params"]["messages"][0]["content"][0]["source"]["data"] == b64(RED)


def test_a_prompt_requests_images_go_before_its_text_in_one_user_turn():
    turns = chat_messages(Request(prompt="What?", images=(Image.of(RED),)))
    assert turns[0]["content"] == "What?" and turns[0]["parts"] == [Image.of(RED), "What?"]


# -- the pre-flight ------------------------------------------------------------------------------------------------


def test_a_model_that_takes_no_images_is_refused_in_one_line_before_the_run():
    from ragbench._engines.base import Engine
    from ragbench._engines.hf.engine import HFEngine

    need = EngineNeeds(system="cragmm_agent on crag_mm", images=True)
    _, cannot, _ = needs_problems(HFEngine, "embedded", {}, [need])
    assert len(cannot) == 1 and "\n" not in cannot[0]
    assert cannot[0].startswith("cragmm_agent on crag_mm sends the model images: embedded takes no images")
    # what to use instead: none ships offline, said plainly (it named two hub models, as though at hand), then what
    # to pass: a checkpoint on disk, a vendor's model, or the scripted engine, which runs offline (checked below)
    assert "no image-text model ships with ragbench to run offline: pass --model hf:DIR" in cannot[0]
    assert "SmolVLM-256M-Instruct --local-dir DIR`, once, with network" in cannot[0]
    assert "--model scripted:echo runs the task offline with no model" in cannot[0]

    class TextOnly(Engine):
        kind = "textonly"

    _, cannot, _ = needs_problems(TextOnly, "m", {}, [need])
    assert cannot == [
        "cragmm_agent on crag_mm sends the model images: the textonly engine sends no images; run an image-text "
        "model with --model openai:, anthropic:, gemini:, vllm: or hf:"
    ]
    assert needs_problems(ScriptedEngine, "echo", {}, [need])[1] == []


def test_a_task_whose_examples_hold_images_needs_a_model_that_takes_them():
    class Planned:
        def __init__(self, holds: bool, need: EngineNeeds | None) -> None:
            self.task = type("T", (), {"name": "crag_mm", "holds_images": holds, "text_only": ""})()  # Task's defaults
            self.system = type("S", (), {"name": "vanilla", "engine_needs": lambda s, task: need})()

    needs = engine_needs(
        [Planned(True, None), Planned(False, None), Planned(True, EngineNeeds(system="x", images=False))]
    )
    assert needs == [EngineNeeds(system="vanilla on crag_mm", images=True), EngineNeeds(system="x", images=False)]
    tools = engine_needs([Planned(True, EngineNeeds(system="agent on crag_mm", tools=True))])
    assert tools == [EngineNeeds(system="agent on crag_mm", tools=True, images=True)]


def test_an_engine_that_takes_no_images_refuses_the_call_rather_than_dropping_them():
    from ragbench._llm import LLM
    from ragbench._values.engine_errors import RequestError

    class TextOnly(ScriptedEngine):
        kind = "textonly"
        takes_images = False

    async def run(llm: LLM) -> Response:
        try:
            return await llm.chat([user_turn("What?", [RED])])
        finally:
            await llm.scheduler.close()

    with pytest.raises(RequestError, match="textonly engine sends no images"):
        asyncio.run(run(LLM(Scheduler(), TextOnly("echo"))))
    assert asyncio.run(run(LLM(Scheduler(), ScriptedEngine("echo")))).text == "What?"

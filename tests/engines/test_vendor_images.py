"""A picture a vendor's API would refuse is never sent to fail (hosted/vendor_images.py): Anthropic's and OpenAI's
are resized to the size each one's docs give, Gemini's request over its inline limit is refused in one line, and a
picture within the limits goes byte for byte. Real pictures (PIL), through each vendor's own SDK to the fake server
of its API on 127.0.0.1 (tests/engines/test_engine_*.py), and into the batch lines."""

from __future__ import annotations

import base64
import io
import random

import pytest
from PIL import Image as PILImage
from test_engine_openai import FakeServer, generate

from conftest import needs
from ragbench._engines.hosted import openai as openai_engine
from ragbench._engines.hosted.vendor_images import ANTHROPIC_IMAGES, VendorImages, sent_bytes, sent_pictures
from ragbench.api import Image, user_turn
from ragbench.api.engines import Request, RequestError


def picture(width: int, height: int, kind: str = "PNG", noise: bool = False, seed: int = 0, **save: object) -> bytes:
    """A picture of `width` x `height`: random pixels (which do not compress) or a gradient."""
    if noise:
        made = PILImage.frombytes("RGB", (width, height), random.Random(seed).randbytes(3 * width * height))
    else:
        made = PILImage.linear_gradient("L").resize((width, height)).convert("RGB")
    buffer = io.BytesIO()
    made.save(buffer, format=kind, **save)
    return buffer.getvalue()


def asked(*pictures: bytes) -> Request:
    return Request.chat([user_turn("What is this?", list(pictures))])


def decoded(data: bytes) -> PILImage.Image:
    opened = PILImage.open(io.BytesIO(data))
    opened.load()
    return opened


def anthropic_sent(server: FakeServer, request: Request) -> list[bytes]:
    """The pictures of `request` as the anthropic engine's SDK sent them."""
    import test_engine_anthropic

    generate(test_engine_anthropic.engine(server), request)
    blocks = server.requests[-1]["body"]["messages"][0]["content"]
    return [base64.b64decode(block["source"]["data"]) for block in blocks if block["type"] == "image"]


@pytest.fixture
def anthropic_server(monkeypatch):
    import test_engine_anthropic

    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    server = FakeServer(answer=test_engine_anthropic.echo)
    yield server
    server.stop()


@needs("anthropic")
def test_anthropic_gets_a_picture_past_its_limits_resized_to_the_size_its_docs_give(anthropic_server):
    wide = picture(9000, 60)  # over 8000 px a side
    heavy = picture(1350, 1350, noise=True)  # 7.3 MB as sent, over 5 MB
    small = picture(300, 200)
    assert sent_bytes(Image.of(heavy)) > 5 * 1024 * 1024
    sent = anthropic_sent(anthropic_server, asked(wide, heavy, small))
    assert sent[2] == small  # within the limits: byte for byte
    wide_sent, heavy_sent = decoded(sent[0]), decoded(sent[1])
    assert wide_sent.size == (1568, 10)  # the long edge 1568 px, the aspect ratio kept (60 * 1568 / 9000)
    assert max(heavy_sent.size) <= 1568 and heavy_sent.size[0] * heavy_sent.size[1] <= 1_150_000
    assert heavy_sent.size == (1072, 1072) and len(base64.b64encode(sent[1])) <= 5 * 1024 * 1024
    assert wide_sent.format == heavy_sent.format == "PNG"


@needs("anthropic")
def test_anthropic_gets_more_than_20_pictures_within_2000_px_each(anthropic_server):
    pictures = [picture(2400, 30 + n) for n in range(21)]  # 2400 px: taken alone, refused among 21
    sent = anthropic_sent(anthropic_server, asked(*pictures))
    assert [decoded(data).size[0] for data in sent] == [1568] * 21
    assert anthropic_sent(anthropic_server, asked(*pictures[:20])) == pictures[:20]  # 20: each as it is


@needs("anthropic")
def test_a_resized_jpeg_stays_a_jpeg_the_right_way_up(anthropic_server):
    exif = PILImage.Exif()
    exif[0x0112] = 6  # the camera held on its side: shown rotated 90 degrees clockwise
    sideways = picture(9000, 90, "JPEG", exif=exif.tobytes())
    (sent,) = anthropic_sent(anthropic_server, asked(sideways))
    shown = decoded(sent)
    assert shown.format == "JPEG" and shown.size == (15, 1568)  # upright: 90 x 9000 as shown


@needs("anthropic")
def test_anthropics_batch_lines_carry_the_resized_picture(monkeypatch):
    from ragbench._engines.hosted.anthropic import AnthropicEngine
    from ragbench._engines.hosted.batch_anthropic import AnthropicBatches

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    _, line = AnthropicBatches(AnthropicEngine("claude-sonnet-4-5", batch=True)).line(asked(picture(9000, 60)), "c")
    data = line["params"]["messages"][0]["content"][0]["source"]["data"]
    assert decoded(base64.b64decode(data)).size == (1568, 10)


def test_openais_own_api_gets_a_picture_past_its_limit_resized_and_another_server_the_bytes(monkeypatch):
    bmp = picture(2600, 2050, "BMP")  # 16 MB, 21.3 MB as sent: over OpenAI's 20 MB a picture
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    server = FakeServer()
    try:
        request = asked(bmp)
        generate(openai_engine.OpenAIEngine("m", base_url=server.base_url, max_retries=0), request)
        monkeypatch.setattr(openai_engine, "OPENAI_HOST", "127.0.0.1")  # the fake server stands for OpenAI's API
        generate(openai_engine.OpenAIEngine("m", base_url=server.base_url, max_retries=0), request)
        urls = [r["body"]["messages"][0]["content"][0]["image_url"]["url"] for r in server.requests]
    finally:
        server.stop()
    assert urls[0] == "data:image/bmp;base64," + base64.b64encode(bmp).decode()  # a vLLM server: its own limits
    assert urls[1].startswith("data:image/png;base64,")
    assert decoded(base64.b64decode(urls[1].partition(",")[2])).size == (2048, 1614)  # within 2048x2048


@needs("google.genai")
def test_gemini_refuses_a_request_over_its_inline_limit_in_one_line_before_sending_it(monkeypatch):
    import test_engine_gemini

    for name in ("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    server = FakeServer(answer=test_engine_gemini.echo)
    try:
        gemini = test_engine_gemini.engine(server)
        with pytest.raises(RequestError) as refused:
            generate(gemini, asked(picture(2600, 2050, "BMP")))  # 21.3 MB as sent
        assert server.requests == []  # never sent
        generate(gemini, asked(picture(300, 200)))
        assert len(server.requests) == 1
    finally:
        server.stop()
    line = str(refused.value)
    assert "\n" not in line and line.startswith("gemini engine: the request's 1 pictures are 21.3 MB as sent (base64)")
    assert "over the 20 MB one gemini request takes" in line and "Files API" in line


SMALL = VendorImages("vendor", "docs", side=400, request_bytes=60_000, fit_side=100, fit_pixels=5_000)


def test_a_request_over_its_total_is_sent_with_every_picture_at_the_documented_size():
    pictures = [picture(150, 150, noise=True, seed=n) for n in range(2)]  # 67 kB each, 180 kB as sent
    fitted = sent_pictures(asked(*pictures), SMALL)
    sizes = [decoded(image.data).size for image in fitted.sent_images]
    assert sizes == [(70, 70), (70, 70)]  # within 100 px and 5,000 pixels
    assert fitted.cache_key("e") != asked(*pictures).cache_key("e")  # (the engine keys the request it was given)


def test_a_request_too_large_even_at_the_documented_size_is_refused_in_one_line():
    rules = VendorImages("vendor", "docs", request_bytes=60_000, fit_side=200)
    with pytest.raises(RequestError) as refused:
        sent_pictures(asked(*[picture(150, 150, noise=True, seed=n) for n in range(2)]), rules)
    assert str(refused.value) == (
        "vendor engine: the request's 2 pictures are 0.2 MB as sent (base64) even at the 200-pixel size its docs "
        "give, over the 0.06 MB one vendor request takes (docs): send fewer or smaller pictures"
    )


def test_a_picture_over_a_limit_that_cannot_be_decoded_is_refused_in_one_line():
    broken = picture(600, 20, noise=True)[:2000]  # a PNG cut short: its header says 600 px
    with pytest.raises(RequestError) as refused:
        sent_pictures(asked(broken), SMALL)
    line = str(refused.value)
    assert "\n" not in line and line.startswith("vendor engine: picture image bytes is too large for the vendor API")
    assert "600x20 px, over the 400 px a side it may be" in line


def test_a_prompt_requests_pictures_are_fitted_too():
    request = Request(prompt="What?", images=(Image.of(picture(500, 50)),))
    (sent,) = sent_pictures(request, SMALL).images
    assert decoded(sent.data).size == (100, 10)
    assert sent_pictures(Request(prompt="What?"), ANTHROPIC_IMAGES) == Request(prompt="What?")

"""A chat turn with pictures as one public typed value (`ragbench.api.Message`, `chat_turn`, `user_turn`) from a
task's prompt to an engine's request body: the same request, cache key and record as the dict form a third party
still writes; taken by `Request.chat` as it is; each image written as each vendor's API takes it
(`ragbench.api.engines`); each image's digest computed once."""

from __future__ import annotations

import base64
import hashlib
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api import Image, Message, chat_turn, user_turn
from ragbench.api.engines import (
    Request,
    anthropic_image_part,
    chat_messages,
    content_of,
    data_url,
    gemini_image_part,
    openai_image_part,
    openai_message,
    responses_image_part,
    text_part,
)


def png(rgb: tuple[int, int, int]) -> bytes:
    from PIL import Image as PILImage

    buffer = io.BytesIO()
    PILImage.new("RGB", (8, 6), rgb).save(buffer, format="PNG")
    return buffer.getvalue()


RED, BLUE = Image.of(png((200, 30, 60))), Image.of(png((20, 40, 220)))
PARTS = st.lists(st.one_of(st.text(max_size=12), st.sampled_from([RED, BLUE])), max_size=6).filter(
    lambda parts: any(isinstance(part, Image) for part in parts)
)


def as_dict(part: str | Image) -> dict:
    return {"type": "text", "text": part} if isinstance(part, str) else {"type": "image", "image": part}


@settings(max_examples=60, deadline=None)
@given(PARTS, st.text(max_size=12))
def test_a_typed_turn_is_the_request_its_dict_form_is(parts, system):
    typed = Request.chat([Message("system", system), chat_turn(parts)])
    given_as_dicts = Request.chat(
        [{"role": "system", "content": system}, {"role": "user", "content": [as_dict(p) for p in parts]}]
    )
    assert typed.cache_key("e") == given_as_dicts.cache_key("e")
    assert typed.to_dict() == given_as_dicts.to_dict()
    assert chat_messages(typed) == chat_messages(given_as_dicts)
    assert typed.messages == given_as_dicts.messages


def test_request_chat_takes_a_typed_turn_as_it_is():
    turn = user_turn("What is this?", [RED])
    request = Request.chat([turn])
    assert request.messages[0] is turn  # not written to a dict and read back
    assert turn.parts == (RED, "What is this?") and turn.images == (RED,) and turn.content == "What is this?"
    # a turn of text only keys as the plain turn it is
    plain = Request.chat([Message("user", "hi")])
    assert plain.cache_key("e") == Request.chat([{"role": "user", "content": "hi"}]).cache_key("e")
    assert user_turn("hi") == Message("user", "hi")


def test_a_record_holds_an_image_by_its_digest_an_engine_its_bytes():
    request = Request.chat([chat_turn(["[1]", RED, "[2]", BLUE, "Which is red?"])])
    record = request.to_dict()["messages"][0]["content"]
    assert record[1] == {
        "type": "image",
        "image": {"sha256": RED.digest, "media_type": "image/png", "bytes": len(RED.data)},
    }
    (turn,) = chat_messages(request)
    assert turn["content"] == "[1]\n[2]\nWhich is red?" and turn["parts"] == ["[1]", RED, "[2]", BLUE, "Which is red?"]
    sent = content_of(turn, text_part, openai_image_part)
    assert sent[0] == {"type": "text", "text": "[1]"}
    url = sent[1]["image_url"]["url"]
    assert url == data_url(RED) and base64.b64decode(url.split(",", 1)[1]) == RED.data
    assert url.startswith("data:image/png;base64,")
    assert openai_message(turn) == {"role": "user", "content": sent}


def test_each_vendors_image_part_carries_the_bytes_and_their_type():
    anthropic = anthropic_image_part(BLUE)
    assert anthropic["type"] == "image" and anthropic["source"]["media_type"] == "image/png"
    assert base64.b64decode(anthropic["source"]["data"]) == BLUE.data
    assert gemini_image_part(BLUE) == {"inline_data": {"mime_type": "image/png", "data": BLUE.data}}
    assert responses_image_part(BLUE) == {"type": "input_image", "image_url": data_url(BLUE)}


def test_an_images_digest_is_computed_once_when_it_is_made(monkeypatch):
    picture = png((1, 2, 3))
    hashed = []
    sha256 = hashlib.sha256

    def counted(data=b"", **kwargs):
        hashed.append(bytes(data) == picture)
        return sha256(data, **kwargs)

    monkeypatch.setattr(hashlib, "sha256", counted)
    image = Image.of(picture)
    assert sum(hashed) == 1  # made with its digest
    request = Request.chat([user_turn("What?", [image])])
    for _ in range(3):
        request.cache_key("e"), request.to_dict(), image.record(source=True), repr(request.messages)
    assert sum(hashed) == 1


def test_a_turns_parts_are_texts_and_images():
    with pytest.raises(TypeError, match="texts and Images"):
        chat_turn(["What?", png((1, 2, 3))])

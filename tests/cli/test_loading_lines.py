"""What the console says while a model of this machine loads (ragbench._run.progress.loading_lines): converting the
embedded model where its copy is not made yet under $RAGBENCH_CACHE_DIR, then loading; nothing for a model served
elsewhere. The run says them on stderr with its progress bar (tests/run/test_demo_with_embedded_model.py)."""

from __future__ import annotations

from ragbench._run.progress import loading_lines

CONVERTING = "converting the embedded model once (about a minute; kept for later runs) ..."


def test_a_first_run_on_the_embedded_model_says_it_converts_then_loads(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_CACHE_DIR", str(tmp_path / "fresh"))
    assert loading_lines(None) == [CONVERTING, "loading model hf:embedded ..."]
    assert loading_lines("vllm:smollm2") == [CONVERTING, "loading model vllm:smollm2 ..."]


def test_once_converted_it_says_only_that_it_loads(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_CACHE_DIR", str(tmp_path))
    copy = tmp_path / "smollm2-safetensors"  # a converted copy as the conversion leaves it
    copy.mkdir()
    for name in ("SOURCE", "config.json", "model.safetensors"):
        (copy / name).write_text("")
    assert loading_lines("hf:embedded") == ["loading model hf:embedded ..."]
    assert loading_lines("hf:/models/llama") == ["loading model hf:/models/llama ..."]


def test_a_model_served_elsewhere_loads_nothing_here_and_says_nothing():
    assert loading_lines("openai:gpt-4o-mini") == [] and loading_lines("scripted:echo") == []

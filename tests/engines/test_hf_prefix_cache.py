"""The hf engine's prefix cache (ragbench._engines.hf.prefix_cache): the states it gives back are those stored for
exactly the prefix asked, the longest one cached, and it never holds more than its bound. States here are
made-up tensors whose entries say which token, at which position, they belong to."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import needs
from ragbench._engines.hf.prefix_cache import PrefixCache

if TYPE_CHECKING:
    import torch

pytestmark = needs("torch")  # imported by the tests that use it, not while collecting

LAYERS = 2
TOKEN_BYTES = LAYERS * 2 * 2 * 4  # layers x (keys, values) x 2 float32 entries


def states(ids: list[int]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per layer (keys, values) of shape [1, 1, len(ids), 2]: each token's (id, position), values negated."""
    import torch

    keys = torch.tensor([[float(t), float(i)] for i, t in enumerate(ids)]).reshape(1, 1, len(ids), 2)
    return [(keys + layer, -keys - layer) for layer in range(LAYERS)]


def assert_states_of(layers: list[tuple[torch.Tensor, torch.Tensor]], ids: list[int]) -> None:
    import torch

    expected = states(ids)
    assert len(layers) == LAYERS
    for (k, v), (ek, ev) in zip(layers, expected):
        assert torch.equal(k, ek) and torch.equal(v, ev)


def shared(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_the_longest_cached_prefix_comes_back_across_a_split():
    import torch

    cache = PrefixCache(10**9, torch.cat)
    demo = [5, 6, 7, 8]
    cache.add([*demo, 1, 2, 3], states([*demo, 1, 2, 3]))
    cache.add([*demo, 9, 9], states([*demo, 9, 9]))  # splits the first run after the demo
    n, layers = cache.longest([*demo, 1, 2, 4], limit=100)
    assert n == 6
    assert_states_of(layers, [*demo, 1, 2])
    n, layers = cache.longest([*demo, 9, 9, 9], limit=100)
    assert n == 6
    assert_states_of(layers, [*demo, 9, 9])
    assert cache.longest([4, 5], limit=100) == (0, [])
    n, layers = cache.longest([*demo, 1, 2, 3], limit=3)  # the engine asks for all but the last token
    assert n == 3
    assert_states_of(layers, demo[:3])
    assert cache.bytes == (len(demo) + 3 + 2) * TOKEN_BYTES  # the shared demo is stored once


def test_least_recently_used_leaves_go_first_and_the_bound_holds():
    import torch

    cache = PrefixCache(12 * TOKEN_BYTES, torch.cat)
    demo = [1, 2, 3, 4]
    for tail in ([10, 11, 12, 13], [20, 21, 22, 23]):
        cache.add(demo + tail, states(demo + tail))
    assert cache.bytes == 12 * TOKEN_BYTES
    cache.longest([*demo, 10], limit=100)  # the first example's is used again
    cache.add([*demo, 30, 31], states([*demo, 30, 31]))
    assert cache.bytes <= 12 * TOKEN_BYTES
    assert cache.longest([*demo, 20, 21], limit=100)[0] == 4  # the least recently used tail went
    assert cache.longest([*demo, 10, 11, 12, 13, 14], limit=100)[0] == 8
    assert cache.longest([*demo, 30, 31, 32], limit=100)[0] == 6


token_lists = st.lists(st.integers(0, 3), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.lists(token_lists, min_size=1, max_size=8), token_lists)
def test_longest_gives_the_states_of_the_longest_stored_prefix(stored, asked):
    import torch

    cache = PrefixCache(10**9, torch.cat)
    for ids in stored:
        cache.add(ids, states(ids))
    n, layers = cache.longest(asked, limit=len(asked))
    assert n == max(shared(ids, asked) for ids in stored)
    if n:
        assert_states_of(layers, asked[:n])


@settings(max_examples=60, deadline=None)
@given(st.lists(token_lists, min_size=1, max_size=10), st.integers(0, 30))
def test_the_cache_never_holds_more_than_its_bound_and_counts_its_bytes(stored, bound_tokens):
    import torch

    cache = PrefixCache(bound_tokens * TOKEN_BYTES, torch.cat)
    for ids in stored:
        cache.add(ids, states(ids))
        assert cache.bytes <= cache.max_bytes
        held = sum(t.numel() * t.element_size() for node in cache._nodes for pair in node.layers for t in pair)
        assert cache.bytes == held
        n, layers = cache.longest(ids, limit=len(ids))  # whatever is left of it is its own prefix's states
        if n:
            assert_states_of(layers, ids[:n])

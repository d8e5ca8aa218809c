"""The `hf` engine's prefix cache: the key/value states of prompts already computed, kept so that a prompt
starting with a cached one computes only the rest (as vLLM's automatic prefix caching and SGLang's radix
cache do on GPUs).

Multi-step systems send prompts that are mostly shared: every call repeats the same few-shot
demonstrations, and a step's prompt is often the one before it plus its answer and a little more. The
cache is a radix tree over token ids: each node holds a run of tokens and their key/value states (one
(keys, values) pair of tensors per layer, the sequence on dimension 2), so a prefix shared by many
prompts is stored once. `longest` gives the states of a prompt's longest cached prefix, `add` stores a
computed sequence's. The tree holds at most `max_bytes` of tensors: beyond that the least recently used
leaves are dropped (a leaf's parent, a prefix of it, stays until it is a leaf and the least recently used).
Nothing here imports torch; the tensors' own methods and the `cat` given do the work.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Layers = list[tuple[Any, Any]]  # per layer: (keys, values), each [batch 1, heads, tokens, head dim]


class _Node:
    __slots__ = ("children", "layers", "parent", "tokens", "used")

    def __init__(self, tokens: tuple[int, ...], layers: Layers, parent: _Node | None, used: int) -> None:
        self.tokens = tokens
        self.layers = layers
        self.parent = parent
        self.children: dict[int, _Node] = {}  # by first token
        self.used = used  # the cache's clock when this node was last on a looked-up or added path

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for pair in self.layers for t in pair)


def _slice(layers: Layers, start: int, end: int) -> Layers:
    """Tokens start..end of `layers`, copied (so that the rest of the tensors they come from can be freed)."""
    return [(k.narrow(2, start, end - start).clone(), v.narrow(2, start, end - start).clone()) for k, v in layers]


def shared_length(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading items `a` and `b` share."""
    count = 0
    for x, y in zip(a, b):
        if x != y:
            break
        count += 1
    return count


class PrefixCache:
    def __init__(self, max_bytes: int, cat: Callable[..., Any]) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._cat = cat  # torch.cat
        self._root = _Node((), [], None, 0)
        self._nodes: set[_Node] = set()
        self._clock = 0

    def _path(self, ids: Sequence[int]) -> list[tuple[_Node, int]]:
        """The nodes `ids` runs through from the root, each with how many of its tokens `ids` matches (all but
        perhaps the last's)."""
        path, node, position = [], self._root, 0
        while position < len(ids) and (child := node.children.get(ids[position])) is not None:
            matched = shared_length(child.tokens, ids[position : position + len(child.tokens)])
            path.append((child, matched))
            position += matched
            if matched < len(child.tokens):
                break
            node = child
        return path

    def _touch(self, path: list[tuple[_Node, int]]) -> None:
        self._clock += 1
        for node, _ in path:
            node.used = self._clock

    def longest(self, ids: Sequence[int], limit: int) -> tuple[int, Layers]:
        """(n, states): the key/value states of the first n tokens of `ids`, the longest cached prefix of at most
        `limit` tokens; (0, []) where none is cached."""
        path = self._path(ids)
        self._touch(path)
        length, parts = 0, []
        for node, matched in path:
            take = min(matched, limit - length)
            if take <= 0:
                break
            parts.append(node.layers if take == len(node.tokens) else _slice(node.layers, 0, take))
            length += take
        if not parts:
            return 0, []
        if len(parts) == 1:
            return length, list(parts[0])
        return length, [
            (self._cat([p[i][0] for p in parts], dim=2), self._cat([p[i][1] for p in parts], dim=2))
            for i in range(len(parts[0]))
        ]

    def add(self, ids: Sequence[int], layers: Layers) -> None:
        """Store the states `layers` of the tokens `ids` (their sequence length is len(ids)), then drop least
        recently used leaves while the cache holds more than max_bytes."""
        path = self._path(ids)
        parent, position = self._root, 0
        for node, matched in path:
            position += matched
            if matched < len(node.tokens):
                if position == len(ids):
                    break  # ids end inside this node: nothing new to store
                node = self._split(node, matched)
            parent = node
        if position < len(ids):
            leaf = _Node(tuple(ids[position:]), _slice(layers, position, len(ids)), parent, 0)
            parent.children[leaf.tokens[0]] = leaf
            self._nodes.add(leaf)
            self.bytes += leaf.nbytes
            path.append((leaf, len(leaf.tokens)))
        self._touch(path)
        self._evict()

    def _split(self, node: _Node, at: int) -> _Node:
        """Cut `node` after its first `at` tokens into a new parent holding them; returns that parent."""
        assert node.parent is not None
        head = _Node(node.tokens[:at], _slice(node.layers, 0, at), node.parent, node.used)
        node.parent.children[head.tokens[0]] = head
        before = node.nbytes
        node.tokens, node.layers = node.tokens[at:], _slice(node.layers, at, len(node.tokens))
        node.parent = head
        head.children[node.tokens[0]] = node
        self._nodes.add(head)
        self.bytes += head.nbytes + node.nbytes - before
        return head

    def _evict(self) -> None:
        while self.bytes > self.max_bytes and self._nodes:
            leaf = min((n for n in self._nodes if not n.children), key=lambda n: n.used)
            assert leaf.parent is not None
            del leaf.parent.children[leaf.tokens[0]]
            self._nodes.discard(leaf)
            self.bytes -= leaf.nbytes

"""The `hf` engine's prefill through its prefix cache (hf/prefix_cache.py): each prompt of a batch computes, alone,
only the tokens after its longest cached prefix (all but its last token); the rows' states are then stacked, left
padded like the prompts, into one transformers cache from which `generate` computes the last prompt column and
decodes the batch together. After `generate`, each row's prompt and generated tokens are cached.

Positions agree with the batch path: a row's states are computed at positions 0.. of its own tokens, and generate
gives a left-padded row positions counted from its first unpadded token (the attention mask's running sum); the
padded columns are masked out.
"""

from __future__ import annotations

import inspect
from typing import Any

from .prefix_cache import Layers, PrefixCache


def cache_argument(model: Any) -> str:
    """The name `generate` takes a cache by: transformers renamed `past_key_values` to `cache` within 5.x."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


class Prefill:
    """The prompts of one batch (one row each), prefilled to all but their last token; `cache` is what
    `generate` starts from (None where every prompt is a single token: generate computes them whole)."""

    def __init__(
        self, torch: Any, model: Any, prefix_cache: PrefixCache, prompts: list[list[int]], room: int = 0
    ) -> None:
        from transformers import DynamicCache

        self.torch, self.model, self.prefix_cache, self.prompts = torch, model, prefix_cache, prompts
        self.width = max(len(ids) for ids in prompts)
        self.reused = 0
        parameters = inspect.signature(model.forward).parameters
        extra = {"logits_to_keep": 1} if "logits_to_keep" in parameters else {}  # the logits are not needed
        self.argument = argument = cache_argument(model)
        device = model.device
        rows: list[Layers] = []
        for ids in prompts:
            reused, layers = prefix_cache.longest(ids, len(ids) - 1)
            self.reused += reused
            row: Any = DynamicCache(ddp_cache_data=layers or None, config=model.config)
            if reused < len(ids) - 1:
                rest = torch.tensor([ids[reused:-1]], device=device)
                model(input_ids=rest, use_cache=True, **{argument: row}, **extra)
                layers = [(layer.keys, layer.values) for layer in row.layers]
                prefix_cache.add(ids[:-1], layers)
            rows.append(layers)
        self.cache: Any = None
        if self.width > 1:
            self.cache = DynamicCache(config=model.config)
            self.cache.layers = self._stacked(rows, room)

    def _stacked(self, rows: list[Layers], room: int) -> list[Any]:
        """Per layer, the rows' states left-padded with zeros to width - 1 columns, as one batch with room for
        `room` more columns (hf/roomy_cache.py); each row's layer let go once stacked (memory: the rows and the batch
        are not all held at once)."""
        from .roomy_cache import RoomyLayer

        columns = self.width - 1
        first = next(layers for layers in rows if layers)  # a prompt of width > 1 tokens has states
        stacked = []
        for index in range(len(first)):
            shape = first[index][0].shape
            buffers = [first[index][0].new_zeros((len(rows), shape[1], columns + room, shape[3])) for _ in range(2)]
            for slot, layers in enumerate(rows):
                if layers:  # else a prompt of one token: no states before it
                    for buffer, states in zip(buffers, layers[index]):
                        buffer[slot, :, columns - states.shape[2] : columns] = states[0]
                    layers[index] = (None, None)
            stacked.append(RoomyLayer(buffers[0], buffers[1], columns))
        return stacked

    def store(self, out: Any, lengths: list[int]) -> None:
        """Cache each row's prompt and the first `lengths[row]` tokens it generated, as far as their states are in
        the cache generate filled (every token fed: all but the last generated)."""
        if self.cache is None:
            return
        for row, sequence in enumerate(out.tolist()):
            start = self.width - len(self.prompts[row])
            self.store_row(row, self.cache, row, start, sequence[self.width : self.width + lengths[row]])

    def store_row(self, row: int, cache: Any, slot: int, start: int, generated: list[int]) -> None:
        """Cache prompt `row` and the `generated` ids after it, as far as `cache`'s row `slot` holds their states
        (its columns from `start` on)."""
        ids = (self.prompts[row] + generated)[: cache.get_seq_length() - start]
        end = start + len(ids)
        self.prefix_cache.add(
            ids,
            [
                (layer.keys[slot : slot + 1, :, start:end], layer.values[slot : slot + 1, :, start:end])
                for layer in cache.layers
            ],
        )

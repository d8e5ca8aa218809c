"""The `hf` engine's prefill through its prefix cache (hf_prefix_cache.py): each prompt of a batch computes, alone,
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

from .hf_prefix_cache import Layers, PrefixCache


def cache_argument(model: Any) -> str:
    """The name `generate` takes a cache by: transformers renamed `past_key_values` to `cache` within 5.x."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


class Prefill:
    """The prompts of one batch (one row each), prefilled to all but their last token; `cache` is what
    `generate` starts from (None where every prompt is a single token: generate computes them whole)."""

    def __init__(self, torch: Any, model: Any, prefix_cache: PrefixCache, prompts: list[list[int]]) -> None:
        from transformers import DynamicCache

        self.torch, self.model, self.prefix_cache, self.prompts = torch, model, prefix_cache, prompts
        self.width = max(len(ids) for ids in prompts)
        self.reused = 0
        parameters = inspect.signature(model.forward).parameters
        extra = {"logits_to_keep": 1} if "logits_to_keep" in parameters else {}  # the logits are not needed
        argument = cache_argument(model)
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
        self.cache: Any = (
            DynamicCache(ddp_cache_data=self._stacked(rows), config=model.config) if self.width > 1 else None
        )

    def _stacked(self, rows: list[Layers]) -> Layers:
        """Per layer, the rows' states left-padded with zeros to width - 1 tokens, as one batch; each row's layer
        let go once stacked (memory: the rows and the batch are not all held at once)."""
        torch, columns = self.torch, self.width - 1
        first = next(layers for layers in rows if layers)  # a prompt of width > 1 tokens has states
        none = first[0][0][:, :, :0]  # a prompt of one token: no states before it
        stacked = []
        for index in range(len(first)):
            keys, values = [], []
            for layers in rows:
                k, v = layers[index] if layers else (none, none)
                keys.append(torch.nn.functional.pad(k, (0, 0, columns - k.shape[2], 0)))
                values.append(torch.nn.functional.pad(v, (0, 0, columns - v.shape[2], 0)))
                if layers:
                    layers[index] = (none, none)
            stacked.append((torch.cat(keys, dim=0), torch.cat(values, dim=0)))
        return stacked

    def store(self, out: Any, lengths: list[int]) -> None:
        """Cache each row's prompt and the first `lengths[row]` tokens it generated, as far as their states are in
        the cache generate filled (every token fed: all but the last generated)."""
        if self.cache is None:
            return
        fed = self.cache.get_seq_length()  # columns: the padded prompt and the generated tokens fed
        sequences = out.tolist()
        for row, ids in enumerate(self.prompts):
            start = self.width - len(ids)
            end = min(self.width + lengths[row], fed)
            layers = [(layer.keys[row : row + 1], layer.values[row : row + 1]) for layer in self.cache.layers]
            kept = [(k.narrow(2, start, end - start), v.narrow(2, start, end - start)) for k, v in layers]
            self.prefix_cache.add(sequences[row][start:end], kept)

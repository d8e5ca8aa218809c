"""The `hf` engine's greedy decoding after a prefix-cache prefill (hf/prefill.py), in place of transformers
`generate`: each step feeds every unfinished row's last token, picks the most likely next one, and a row leaves the
batch as soon as it ends (EOS or a stop string, hf_decoding.StopTracker), its states cached at once. `generate`
keeps feeding a finished row (padding) until the batch's last row ends, so a batch of answers of different lengths
cost as much as its longest; here each step computes only the rows still running, and the padding columns that no
running row needs are dropped with them.

Each step computes what `generate`'s greedy step computes for a row (its token at the position after the row's
last, attending to the row's unpadded columns; float32 logits, argmax), so the tokens are the same up to float
rounding, as between batch mates (hf/engine.py's "Batch invariance").
"""

from __future__ import annotations

from typing import Any

from .decoding import StopTracker
from .prefill import Prefill


def decode_greedy(
    torch: Any, model: Any, prefill: Prefill, max_new_tokens: int, tracker: StopTracker
) -> list[list[int]]:
    """The ids each row of `prefill` generates greedily, up to `max_new_tokens`, `tracker` recording where each
    ended (the last id being the EOS or the stop-completing one)."""
    from transformers import DynamicCache

    prompts, device = prefill.prompts, model.device
    cache: Any = prefill.cache if prefill.cache is not None else DynamicCache(config=model.config)
    width = prefill.width
    mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in prompts], device=device)
    positions = torch.tensor([[len(ids) - 1] for ids in prompts], device=device)
    fed = torch.tensor([[ids[-1]] for ids in prompts], device=device)
    running = list(range(len(prompts)))  # the batch's rows: indices into prompts
    generated: list[list[int]] = [[] for _ in prompts]
    for _ in range(max_new_tokens):
        logits = model(
            input_ids=fed, attention_mask=mask, position_ids=positions, use_cache=True, **{prefill.argument: cache}
        ).logits
        chosen = logits[:, -1].to(dtype=torch.float32).argmax(dim=-1).tolist()
        kept = []
        for slot, (row, token) in enumerate(zip(running, chosen)):
            generated[row].append(token)
            if tracker.ended(row, generated[row]):
                start = int((mask[slot] == 0).sum())  # the row's left padding
                prefill.store_row(row, cache, slot, start, generated[row][:-1])  # its last id was never fed
            else:
                kept.append(slot)
        if not kept:
            break
        mask = torch.cat([mask, mask.new_ones((len(running), 1))], dim=1)
        if len(kept) < len(running):
            keep = torch.tensor(kept, device=device)
            cache.batch_select_indices(keep)
            mask, positions, chosen = mask[keep], positions[keep], [chosen[slot] for slot in kept]
            running = [running[slot] for slot in kept]
            unused = int(mask.any(dim=0).int().argmax())  # leading columns that are all padding
            if unused:
                mask = mask[:, unused:]
                for layer in cache.layers:
                    layer.drop_leading(unused)
        positions = positions + 1
        fed = torch.tensor([[token] for token in chosen], device=device)
    return generated

"""The `hf` engine's greedy decoding after a prefix-cache prefill (hf/prefill.py), in place of transformers
`generate`: each step feeds every unfinished row's last token, picks the most likely next one, and a row leaves the
batch as soon as it ends (EOS or a stop string, hf_decoding.StopTracker), its states cached at once. `generate`
keeps feeding a finished row (padding) until the batch's last row ends, so a batch of answers of different lengths
cost as much as its longest; here each step computes only the rows still running, and the padding columns that no
running row needs are dropped with them.

Each step computes what `generate`'s greedy step computes for a row (its token at the position after the row's
last, attending to the row's unpadded columns; float32 logits, argmax), so the tokens are the same up to float
rounding, as between batch mates (hf/engine.py's "Batch invariance").

Prompt lookup (Saxena's prompt lookup decoding, transformers' `prompt_lookup_num_tokens`): where every running
row's last `NGRAM` tokens occurred earlier in its prompt or answer, the tokens that followed them there are fed
after its last token as a guess, up to `DRAFT_TOKENS` of them, and one forward pass scores them all. The model's
greedy choice after each position is the token decoding would pick there; the guesses up to the first one it does
not pick are kept (in every row: the batch moves on together), with its pick after them, and the cache forgets
the states of the rest. A step costs reading the weights once, on CPU most of a small model's step: a model that
repeats its prompt's phrases or its own (few-shot patterns, a loop) makes several tokens a step.
"""

from __future__ import annotations

from typing import Any

from .decoding import StopTracker, TokenPicker
from .prefill import Prefill
from .prefix_cache import shared_length

NGRAM = 3  # tokens that must recur for a guess
DRAFT_TOKENS = 12  # at most this many guessed tokens a step


def guess(sequence: list[int], most: int) -> list[int]:
    """Up to `most` tokens that followed the last earlier occurrence of `sequence`'s last NGRAM tokens in it."""
    tail, end = sequence[-NGRAM:], len(sequence) - NGRAM
    if most <= 0 or end <= 0:
        return []
    for start in range(end - 1, -1, -1):
        if sequence[start : start + NGRAM] == tail:
            return sequence[start + NGRAM : start + NGRAM + most]
    return []


def decode_greedy(
    torch: Any, model: Any, prefill: Prefill, max_new_tokens: int, tracker: StopTracker, picker: TokenPicker | None
) -> list[list[int]]:
    """The ids each row of `prefill` generates greedily, up to `max_new_tokens`, `tracker` recording where each
    ended (the last id being the EOS or the stop-completing one) and `picker` (where log-probs are asked) the
    log-probs of each position a row made."""
    from transformers import DynamicCache

    prompts, device = prefill.prompts, model.device
    cache: Any = prefill.cache if prefill.cache is not None else DynamicCache(config=model.config)
    width = prefill.width
    mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in prompts], device=device)
    positions = torch.tensor([[len(ids) - 1] for ids in prompts], device=device)
    last = [ids[-1] for ids in prompts]  # each running row's token to feed next (its column is in `mask`)
    running = list(range(len(prompts)))  # the batch's rows: indices into prompts
    generated: list[list[int]] = [[] for _ in prompts]
    made = 0  # tokens each running row has generated
    while made < max_new_tokens:
        most = min(DRAFT_TOKENS, max_new_tokens - made - 1)
        guesses = [guess(prompts[row] + generated[row], most) for row in running]
        drafted = min(len(row_guess) for row_guess in guesses)
        fed = torch.tensor([[token, *row_guess[:drafted]] for token, row_guess in zip(last, guesses)], device=device)
        if drafted:
            mask = torch.cat([mask, mask.new_ones((len(running), drafted))], dim=1)
        logits = model(
            input_ids=fed,
            attention_mask=mask,
            position_ids=positions + torch.arange(drafted + 1, device=device),
            use_cache=True,
            **{prefill.argument: cache},
        ).logits
        picks = logits.to(dtype=torch.float32).argmax(dim=-1).tolist()
        agreed = min(shared_length(row_guess[:drafted], row_picks) for row_guess, row_picks in zip(guesses, picks))
        if agreed < drafted:  # the states of the guesses from the first one the model did not pick on, forgotten
            cache.crop(agreed - drafted)
            mask = mask[:, : mask.shape[1] - (drafted - agreed)]
        made += agreed + 1
        if picker is not None:  # every running row's positions made this step (those after its end go unread)
            chosen = torch.tensor([row_picks[: agreed + 1] for row_picks in picks], device=device)
            rows = [row for row in running for _ in range(agreed + 1)]
            picker.record(rows, logits[:, : agreed + 1].reshape(len(rows), -1), chosen.reshape(-1))
        kept = []
        for slot, row in enumerate(running):
            for token in picks[slot][: agreed + 1]:
                generated[row].append(token)
                if tracker.ended(row, generated[row]):
                    start = int((mask[slot] == 0).sum())  # the row's left padding
                    prefill.store_row(row, cache, slot, start, generated[row][:-1])  # its last id was never fed
                    break
            else:
                kept.append(slot)
        if not kept:
            break
        mask = torch.cat([mask, mask.new_ones((len(running), 1))], dim=1)
        positions = positions + agreed + 1
        last = [picks[slot][agreed] for slot in kept]
        if len(kept) < len(running):
            mask, positions = _keep_rows(torch, cache, mask, positions, kept)
            running = [running[slot] for slot in kept]
    return generated


def _keep_rows(torch: Any, cache: Any, mask: Any, positions: Any, kept: list[int]) -> tuple[Any, Any]:
    """The mask and positions of the batch's `kept` rows, the cache narrowed to them, and the leading columns that
    are padding in every kept row dropped from the mask and the cache."""
    keep = torch.tensor(kept, device=mask.device)
    cache.batch_select_indices(keep)
    mask, positions = mask[keep], positions[keep]
    unused = int(mask.any(dim=0).int().argmax())  # leading columns that are all padding
    if unused:
        mask = mask[:, unused:]
        for layer in cache.layers:
            layer.drop_leading(unused)
    return mask, positions

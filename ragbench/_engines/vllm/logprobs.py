"""vLLM's log-probs read into TokenLogprobs (the chosen token's, the top k by rank, named tokens within a
window), what a request asks of vLLM for them, and the gate that keeps named-token and top-k requests out of one
async batch.

Logprobs: vLLM gives, per generated token, {token_id: Logprob(logprob, rank, decoded_token)} holding the top-k and
the sampled token; `TokenLogprobs.top` keeps the entries of rank <= k (the k most likely when ranks are missing),
keyed by decoded token text. `Sampling.logprob_tokens` (named vocabulary entries, Self-RAG's reflection tokens)
become vLLM's `logprob_token_ids` (vLLM >= 0.11: exactly those ids' log-probs at every position, from the raw
logits like the top-k); their values go to `TokenLogprobs.named`. vLLM cannot return both in one request, so a
request asking for top-k and named tokens together, or any named-token request on a vLLM without
`logprob_token_ids`, asks for the whole vocabulary (`logprobs=-1`; the engine must be started with
`max_logprobs=-1`) and keeps only what was asked. A named-token request with `logprob_window=k` asks for vLLM's
top-k (`logprobs=k`, as upstream Self-RAG's logprobs=5000 / 32016; needs `max_logprobs` >= k or -1) and reports a
named token only where that dict holds it. A name that is not one entry of the vocabulary fails its request, naming
it. Whenever log-probs are asked, positions carry their `token_id` and `Response.cumulative_logprob` is vLLM's.
While a named-token request without top-k runs, vLLM keeps of each position only what is read (vllm_positions).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from ..._values.engine_errors import EngineError
from ..._values.llm_responses import TokenLogprobs
from ..._values.sampling import Sampling

TokenText = Callable[[int, Any], str]  # a token id (and its vLLM entry) as text


def vocabulary_wide(sampling: Sampling, named_logprobs: bool) -> bool:
    """Whether named tokens are read from vocabulary-wide log-probs rather than logprob_token_ids (`named_logprobs`:
    whether this vLLM has them)."""
    return (
        bool(sampling.logprob_tokens)
        and sampling.logprob_window is None
        and (sampling.logprobs is not None or not named_logprobs)
    )


def window_k(sampling: Sampling, allowed: Any) -> int:
    """The top-k asked for a named-token request with a window: vLLM's own top-k dict (logprobs=k),
    exactly what upstream Self-RAG read, ties and kernels included (ranks recomputed from
    logprob_token_ids values would need the whole vocabulary; vLLM gives those ids dummy ranks). `allowed`: the
    engine's max_logprobs."""
    k = max(int(sampling.logprob_window), sampling.logprobs or 0)  # type: ignore[arg-type]
    if allowed != -1 and k > int(allowed):
        raise EngineError(
            f"vllm engine: a log-prob window of {k} needs vLLM's top-{k} log-probs: start the engine "
            f"with --model-arg max_logprobs=-1 (or >= {k})"
        )
    return k


def logprob_kind(sampling: Sampling, named_logprobs: bool) -> str | None:
    """Which kind of log-prob request `sampling` makes (`LogprobGate`): named, ranked, or none."""
    if sampling.logprob_tokens and sampling.logprob_window is None and not vocabulary_wide(sampling, named_logprobs):
        return "named"
    return "ranked" if sampling.logprobs is not None or sampling.logprob_tokens else None


def read_logprobs(
    choice: Any,
    sampling: Sampling,
    named_ids: list[int],
    token_text: TokenText,
) -> list[TokenLogprobs]:
    """A completion's log-probs at every generated position; `named_ids`: the vocabulary ids of
    `sampling.logprob_tokens`, in order."""
    positions = choice.logprobs
    if positions is None:
        return []
    names = list(zip(sampling.logprob_tokens, named_ids))
    # Ranks count only in a top-k answer: vocabulary-wide dicts come unranked, named ids with dummy ranks.
    window = sampling.logprob_window
    ranked = not sampling.logprob_tokens or window is not None
    out = []
    for entries, token_id in zip(positions, choice.token_ids):
        chosen = entries.get(token_id)
        named = {
            name: float(entries[tid].logprob)
            for name, tid in names
            if tid in entries and (window is None or tid == token_id or entries[tid].rank <= window)
        }
        top = top_entries(entries, sampling.logprobs, ranked, token_text) if sampling.logprobs is not None else {}
        out.append(
            TokenLogprobs(
                token=token_text(token_id, chosen),
                logprob=float(chosen.logprob) if chosen is not None else float("nan"),
                top=top,
                named=named,
                token_id=int(token_id),
            )
        )
    return out


def top_entries(entries: dict[int, Any], k: int, ranked: bool, token_text: TokenText) -> dict[str, float]:
    """The k most likely entries keyed by decoded text (the more likely one on a clash); with ranks, those of
    rank <= k, so a sampled token outside the top-k stays out."""
    if ranked and all(getattr(entry, "rank", None) is not None for entry in entries.values()):
        chosen = sorted(((tid, e) for tid, e in entries.items() if e.rank <= k), key=lambda item: -item[1].logprob)
    else:
        chosen = sorted(entries.items(), key=lambda item: -item[1].logprob)[:k]
    top: dict[str, float] = {}
    for tid, entry in chosen:
        top.setdefault(token_text(tid, entry), float(entry.logprob))
    return top


class LogprobGate:
    """Keeps named-token requests (logprob_token_ids) and top-k log-prob requests out of the async
    engine's running batch at the same time: vLLM (0.32) answers every request of a batch with
    logprob_token_ids rows once one request sets them, so top-k requests beside them would get -inf
    entries. Requests without log-probs always run; a kind waits while the other kind runs."""

    def __init__(self) -> None:
        self.running = {"named": 0, "ranked": 0}
        self.changed = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def hold(self, kind: str | None) -> AsyncIterator[None]:
        if kind is None:
            yield
            return
        other = "ranked" if kind == "named" else "named"
        async with self.changed:
            await self.changed.wait_for(lambda: self.running[other] == 0)
            self.running[kind] += 1
        try:
            yield
        finally:
            async with self.changed:
                self.running[kind] -= 1
                self.changed.notify_all()

"""The `hf` engine's per-step hooks into transformers `generate`: the token picker (greedy or seeded
sampling over the top_p nucleus, recording log-probabilities) and the stop tracker (EOS or a stop
string, per row), and the responses made from what they recorded. Their semantics follow vLLM's; see hf/engine.py."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from ..._values.llm_calls import Response, Sampling, TokenLogprobs, apply_stop


class TokenPicker:
    """Logits processor that picks the next token itself and records logprobs.

    generate runs greedy; for sampling, this returns scores that are -inf except the drawn token,
    drawn per row with its own generator (so seeded rows do not depend on their batch mates).
    """

    def __init__(
        self, torch: Any, sampling: Sampling, generators: list[Any] | None, named_ids: Sequence[int] = ()
    ) -> None:
        self.torch = torch
        self.sampling = sampling
        self.generators = generators
        self.k = sampling.logprobs
        self.named_ids = list(named_ids)  # ids of sampling.logprob_tokens, in order
        self.records: list[tuple[list[float], list[list[float]], list[list[int]]]] = []
        self.named_records: list[list[list[float | None]]] = []  # per step, per row: log-probs of named_ids
        self.recording = self.k is not None or bool(named_ids)
        self.active = generators is not None or self.recording

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        torch = self.torch
        logits = scores.float()
        if self.generators is None:
            chosen = logits.argmax(dim=-1)
            result = scores
        else:
            probs = torch.softmax(logits / self.sampling.temperature, dim=-1)
            if self.sampling.top_p < 1.0:
                # The nucleus from the most likely tokens (a top-k grown until it covers top_p is
                # much cheaper than sorting the whole vocabulary), then a draw inside it.
                vocab, k = probs.shape[-1], min(256, probs.shape[-1])
                while True:
                    values, ids = probs.topk(k, dim=-1)
                    if k == vocab or bool((values.sum(dim=-1) >= self.sampling.top_p).all()):
                        break
                    k = min(vocab, k * 4)
                drop = (values.cumsum(dim=-1) - values) >= self.sampling.top_p
                drop[:, 0] = False  # the most likely token always stays
                values = values.masked_fill(drop, 0.0)
                chosen = torch.stack(
                    [
                        ids[row, torch.multinomial(values[row], 1, generator=generator)[0]]
                        for row, generator in enumerate(self.generators)
                    ]
                )
            else:
                chosen = torch.stack(
                    [
                        torch.multinomial(probs[row], 1, generator=generator)[0]
                        for row, generator in enumerate(self.generators)
                    ]
                )
            result = torch.full_like(scores, float("-inf"))
            result.scatter_(-1, chosen.unsqueeze(-1), 0.0)
        if self.recording:
            logp = torch.log_softmax(logits, dim=-1)
            chosen_lp = logp.gather(-1, chosen.unsqueeze(-1)).squeeze(-1)
            k = max(0, min(int(self.k or 0), logp.shape[-1]))
            top_lp, top_ids = logp.topk(k, dim=-1) if k else (logp[:, :0], chosen[:, None][:, :0])
            self.records.append((chosen_lp.tolist(), top_lp.tolist(), top_ids.tolist()))
            self.named_records.append(self._named(logp, chosen) if self.named_ids else [[]] * logp.shape[0])
        return result

    def _named(self, logp: Any, chosen: Any) -> list[list[float | None]]:
        """Per row, the log-probs of named_ids; with Sampling.logprob_window k, None for a token that
        k or more entries outrank and that was not generated (outside vLLM's logprobs=k dict)."""
        named = logp[:, self.named_ids]
        window = self.sampling.logprob_window
        if window is None:
            rows: list[list[float | None]] = named.tolist()
            return rows
        ranks = (logp.unsqueeze(1) > named.unsqueeze(-1)).sum(-1)  # rows x named: entries above each
        shown = (ranks < window) | (chosen.unsqueeze(-1) == self.torch.tensor(self.named_ids, device=logp.device))
        return [
            [v if s else None for v, s in zip(values, flags)] for values, flags in zip(named.tolist(), shown.tolist())
        ]


class StopTracker:
    """Stopping criterion: ends a row at EOS or once its decoded text holds a stop string, and
    records after how many generated tokens each row ended and why ("eos" or "stop")."""

    def __init__(self, torch: Any, tokenizer: Any, prompt_width: int, eos_ids: set[int], sampling: Sampling) -> None:
        self.torch = torch
        self.tokenizer = tokenizer
        self.width = prompt_width
        self.eos_ids = eos_ids
        self.stop = [s for s in sampling.stop if s]
        self.skip_special = sampling.skip_special_tokens
        self.done_at: defaultdict[int, int] = defaultdict(int)
        self.reason: defaultdict[int, str] = defaultdict(str)

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        done = [self.ended(row, tokens) for row, tokens in enumerate(input_ids[:, self.width :].tolist())]
        return self.torch.tensor(done, dtype=self.torch.bool, device=input_ids.device)

    def ended(self, row: int, generated: list[int]) -> bool:
        """Whether `row` has ended, now that it has `generated` these ids (recording when and why, once)."""
        if not self.done_at[row]:
            if generated[-1] in self.eos_ids:
                self.done_at[row], self.reason[row] = len(generated), "eos"
            elif self.stop:
                text = self.tokenizer.decode(generated, skip_special_tokens=self.skip_special)
                if any(s in text for s in self.stop):
                    self.done_at[row], self.reason[row] = len(generated), "stop"
        return bool(self.done_at[row])


def picked_logprobs(
    picker: TokenPicker,
    row: int,
    tokens: list[int],
    piece: Callable[[int], str],
) -> list[TokenLogprobs]:
    """The log-probs `picker` recorded for one row's generated `tokens` (its top k and named tokens), each token
    as text by `piece`."""
    out = []
    for step, token_id in enumerate(tokens):
        chosen_lp, top_lp, top_ids = picker.records[step]
        named_lp = picker.named_records[step]
        top: dict[str, float] = {}
        for lp, tid in zip(top_lp[row], top_ids[row]):
            top.setdefault(piece(tid), lp)
        named = {t: lp for t, lp in zip(picker.sampling.logprob_tokens, named_lp[row]) if lp is not None}
        out.append(
            TokenLogprobs(token=piece(token_id), logprob=chosen_lp[row], top=top, named=named, token_id=token_id)
        )
    return out


def responses_of(
    chunk: Sequence[tuple[int, list[int], int | None]],
    generated: list[list[int]],
    tracker: StopTracker,
    picker: TokenPicker,
    tokenizer: Any,
    sampling: Sampling,
    rows_per: int,
    piece: Callable[[int], str],
) -> list[Response]:
    """One Response per request of `chunk` from the `generated` ids of its `rows_per` rows: each row cut where
    `tracker` saw it end, decoded and cut at a stop string; the first row's log-probs from `picker`."""
    responses = []
    for position, (_, ids, _) in enumerate(chunk):
        texts, first_length, finish = [], 0, "length"
        for sample in range(rows_per):
            row = position * rows_per + sample
            tokens = generated[row]
            done_at, reason = tracker.done_at[row], tracker.reason[row]
            length = done_at if done_at else len(tokens)
            kept = tokens[: length - 1] if reason == "eos" else tokens[:length]
            text = tokenizer.decode(kept, skip_special_tokens=sampling.skip_special_tokens)
            text, stopped = apply_stop(text, sampling.stop, sampling.keep_stop)
            texts.append(text)
            if sample == 0:
                first_length = length
                finish = "stop" if (reason or stopped) else "length"
        logprobs = cumulative = None
        if picker.records:
            logprobs = picked_logprobs(
                picker, position * rows_per, generated[position * rows_per][:first_length], piece
            )
            cumulative = sum(t.logprob for t in logprobs)
        completion = (
            first_length
            if rows_per == 1
            else sum(
                (tracker.done_at[position * rows_per + s] or len(generated[position * rows_per + s]))
                for s in range(rows_per)
            )
        )
        if rows_per == 1 and sampling.n > 1:
            texts = texts * sampling.n
            completion *= sampling.n
        responses.append(
            Response(
                texts=texts,
                logprobs=logprobs,
                prompt_tokens=len(ids),
                completion_tokens=completion,
                finish_reason=finish,
                cumulative_logprob=cumulative,
                token_ids=generated[position * rows_per][:first_length],
            )
        )
    return responses

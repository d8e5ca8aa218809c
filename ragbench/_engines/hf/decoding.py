"""The `hf` engine's per-step hooks into transformers `generate`: the token picker (greedy or seeded
sampling over the top_p nucleus, recording log-probabilities) and the stop tracker (EOS or a stop
string, per row), each sampled row's generator, and the responses made from what they recorded.

Decoding follows vLLM's semantics so that `hf` and `vllm` results are comparable:
- Chat requests are rendered with the tokenizer's chat template (add_generation_prompt=True) and
  tokenized without adding special tokens again; prompt requests are tokenized as is.
- The model's own generation_config (repetition penalty, top_k, sampling defaults) is ignored:
  only the request's Sampling counts. temperature == 0 is greedy. Otherwise tokens are drawn from
  softmax(logits / temperature) restricted to the top_p nucleus (no top_k), each output row with
  its own torch.Generator seeded from (seed, sample index), so a seeded request gives the same
  samples whatever else shares its batch. n > 1 under greedy decoding repeats the one answer.
- Generation of a row stops at an EOS token or once its decoded text contains a stop string; the
  text is cut before the stop string (base.apply_stop) and never contains the EOS token.
  finish_reason is "stop" for either, "length" at max_tokens. completion_tokens counts the tokens
  generated up to and including that EOS / stop-completing token; prompt_tokens counts the prompt
  without padding.
- logprobs=k: for each generated token of the first sample, the log-probability of the chosen token
  and the k most likely tokens, from log_softmax of the raw logits (before temperature and top_p,
  like vLLM's default). Token strings are the decoded text of the single token id
  (`tokenizer.decode([id])`, as vLLM's `decoded_token`); if two ids decode to the same string the
  more likely one is kept in `top`.
- logprob_tokens=(...): named vocabulary entries (Self-RAG's "[Relevant]" ...) whose log_softmax values
  are reported at every generated position in `TokenLogprobs.named` (no vocabulary-wide dicts);
  each must be a single id of the tokenizer's vocabulary, else the request fails with an error
  naming the token. With `logprob_window=k`, a named token is left out where k or more vocabulary
  entries outrank it there and it was not generated, as from vLLM's top-k dict (logprobs=k).
  Whenever logprobs or logprob_tokens are asked, every position also carries its
  `token_id`, and `Response.cumulative_logprob` is the sum of the chosen tokens' log-probabilities.
- `Response.token_ids` (and the trace's llm steps) holds the first sample's generated ids, those
  completion_tokens counts: up to and including the EOS / stop-completing token.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from ..._values.llm_responses import Response, TokenLogprobs
from ..._values.sampling import Sampling, apply_stop


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
        # per output row, per generated token: the chosen token's log-prob, the top k's, their ids, the named ids'
        self.positions: defaultdict[int, list[tuple[float, list[float], list[int], list[float | None]]]] = defaultdict(
            list
        )
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
            self.record(range(logits.shape[0]), logits, chosen)
        return result

    def record(self, rows: Sequence[int], logits: Any, chosen: Any) -> None:
        """Record the next position of each of `rows` (in order, one a row of `logits`): the log-probs of its
        `chosen` token, of the k most likely and of the named ids (log_softmax of the float32 logits)."""
        logp = self.torch.log_softmax(logits.float(), dim=-1)
        chosen_lp = logp.gather(-1, chosen.unsqueeze(-1)).squeeze(-1)
        k = max(0, min(int(self.k or 0), logp.shape[-1]))
        top_lp, top_ids = logp.topk(k, dim=-1) if k else (logp[:, :0], chosen[:, None][:, :0])
        named = self._named(logp, chosen) if self.named_ids else [[]] * logp.shape[0]
        for row, lp, top, ids, named_lp in zip(rows, chosen_lp.tolist(), top_lp.tolist(), top_ids.tolist(), named):
            self.positions[row].append((lp, top, ids, named_lp))

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
    for token_id, (chosen_lp, top_lp, top_ids, named_lp) in zip(tokens, picker.positions[row]):
        top: dict[str, float] = {}
        for lp, tid in zip(top_lp, top_ids):
            top.setdefault(piece(tid), lp)
        named = {t: lp for t, lp in zip(picker.sampling.logprob_tokens, named_lp) if lp is not None}
        out.append(TokenLogprobs(token=piece(token_id), logprob=chosen_lp, top=top, named=named, token_id=token_id))
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
        if picker.recording:
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


def row_generators(
    torch: Any, device: str, seeds: Sequence[int | None], rows_per: int, sampling: Sampling
) -> list[Any] | None:
    """One torch.Generator per output row of a sampled batch (None under greedy decoding): a request's `rows_per`
    samples each seeded from (seed, sample index), so a seeded request draws alike whatever shares its batch."""
    if sampling.temperature <= 0:
        return None
    generators = []
    for seed in seeds:
        for sample in range(rows_per):
            generator = torch.Generator(device=device)
            if seed is None:
                generator.seed()
            else:
                generator.manual_seed((int(seed) * 1_000_003 + sample) % (2**63))
            generators.append(generator)
    return generators

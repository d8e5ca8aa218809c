"""The `hf` engine's ensemble requests (`Request.ensemble`, REPLUG): the inputs decoded together as the rows
of one batch, every step's next-token logits replaced by their weighted sum, so every row writes the same
text (FlashRAG's REPLUGLogitsProcessor). Greedy only: sampled rows would draw apart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._values.engine_errors import EngineError, RequestError
from ..._values.llm_request import Request
from ..._values.llm_responses import Response
from ..._values.sampling import Sampling


class LogitMixer:
    """Logits processor of an ensemble request (`Request.ensemble`, REPLUG): every row's next-token scores
    become the weighted sum of all rows' (FlashRAG's REPLUGLogitsProcessor: logits, not probabilities, are
    mixed), so greedy decoding writes the same text in every row."""

    def __init__(self, torch: Any, weights: list[float], device: str) -> None:
        self.weights = torch.tensor(weights, dtype=torch.float32, device=device).unsqueeze(1)  # rows x 1

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        mixed = (self.weights * scores.float()).sum(dim=0, keepdim=True)
        return mixed.repeat(scores.shape[0], 1).to(scores.dtype)


def decode_ensemble(
    request: Request,
    encode: Callable[[Request], list[int]],
    run: Callable[..., list[Response]],
    context_length: int,
    lock: Any,
    describe: Callable[[BaseException], str],
) -> Response | EngineError:
    """One text from `request`'s inputs: each tokenized by `encode` (a prompt, or messages through the chat
    template), decoded by `run(rows, sampling, mix=weights)` (HFEngine._run with a `LogitMixer`) holding the
    engine's `lock`. A request that cannot be decoded is a `RequestError`; a failed tokenization or generation
    an `EngineError` (`describe` says the exception in one line)."""
    sampling: Sampling = request.sampling
    assert request.ensemble is not None  # an ensemble request's
    if sampling.temperature > 0 or sampling.n > 1:
        return RequestError("hf engine: an ensemble of prompts is decoded greedily (temperature 0, n 1)")
    try:
        ids = [encode(Request(prompt=i) if isinstance(i, str) else Request(messages=i)) for i, _ in request.ensemble]
        if not all(ids):
            return RequestError("hf engine: empty prompt in an ensemble")
        longest = max(len(i) for i in ids)
        if context_length and longest + sampling.max_tokens > context_length:
            return RequestError(
                f"hf engine: prompt of {longest} tokens + max_tokens {sampling.max_tokens} exceeds "
                f"the model's context of {context_length} tokens"
            )
        with lock:
            response = run([(0, i, None) for i in ids], sampling, mix=[w for _, w in request.ensemble])[0]
    except Exception as exc:
        return EngineError(f"hf engine: the ensemble failed ({describe(exc)})")
    response.prompt_tokens = sum(len(i) for i in ids)
    return response

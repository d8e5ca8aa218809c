"""Self-RAG's critique scores of one generation, from the reflection-token log-probabilities the
engine reports per generated position (`Sampling.logprob_tokens` -> `TokenLogprobs.named`).

Upstream reads vLLM's per-position top-k dicts (k = 5,000-32,016) of log-probs by token id; a
reflection token absent from a dict counts as log-prob -100 there. Here the engine reports just the
named tokens, within the same window under logprob_window=upstream; one the engine did not report
counts as -100 the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ragbench.api.engines import Response, TokenLogprobs

from .prompts import GROUNDING_TOKENS, RELEVANCE_TOKENS, UTILITY_TOKENS, UTILITY_WEIGHTS

MISSING = -100.0  # upstream's log-prob of a token missing from a position's dict

# The top-k log-prob dicts upstream asks vLLM for (SamplingParams(logprobs=k)): logprob_window=upstream
# reports a reflection token only where it is in that dict (Sampling.logprob_window).
SHORT_DECISION_WINDOW = 32016  # run_short_form.py: the adaptive retrieval decision
SHORT_PASSAGE_WINDOW = 5000  # run_short_form.py: each passage's generation
LONG_FORM_WINDOW = 32000  # run_long_form_static.py: the decision and every segment


def logprob(position: TokenLogprobs, token: str) -> float:
    return position.named.get(token, MISSING)


def is_token(position: TokenLogprobs, tokens: Sequence[str]) -> bool:
    """Whether the generated token is one of `tokens` (upstream compares ids; engines report the
    decoded piece, which some tokenizers prefix with a space)."""
    return position.token in tokens or position.token.strip() in tokens


def first_position(positions: Sequence[TokenLogprobs], tokens: Sequence[str]) -> TokenLogprobs | None:
    """The first generated position whose token is one of `tokens`."""
    return next((p for p in positions if is_token(p, tokens)), None)


@dataclass
class Critique:
    final: float
    relevance: float
    grounding: float
    utility: float
    seq_score: float

    def to_dict(self) -> dict[str, float]:
        return {
            "final_score": self.final,
            "relevance_score": self.relevance,
            "ground_score": self.grounding,
            "utility_score": self.utility,
            "seq_score": self.seq_score,
        }


def token_positions(response: Response) -> list[TokenLogprobs]:
    if response.logprobs is None:
        raise ValueError(
            "the engine returned no per-token log-probabilities; selfrag needs an engine that "
            "reports Sampling.logprob_tokens (hf, vllm, replay or scripted with token data)"
        )
    return response.logprobs


def critique(
    response: Response,
    *,
    w_rel: float,
    w_sup: float,
    w_use: float,
    use_groundness: bool,
    use_utility: bool,
    use_seqscore: bool,
    long_form: bool = False,
    long_form_utility_bug: bool = True,
) -> Critique:
    """run_short_form.py call_model_rerank_w_scores_batch (long_form=False) or run_long_form_static.py
    run_step_generation_batch (long_form=True) scoring of one passage's generation.

    Relevance is read at generated position 0. Long-form quirks: a relevance token missing there
    counts as probability -100 (not exp(-100)); with `long_form_utility_bug` (upstream) the utility
    loop reads the grounding tokens, so utility is always 0."""
    positions = token_positions(response)
    first = positions[0] if positions else TokenLogprobs(token="", logprob=0.0)
    if long_form:
        rel = {t: (math.exp(first.named[t]) if t in first.named else MISSING) for t in RELEVANCE_TOKENS}
    else:
        rel = {t: math.exp(logprob(first, t)) for t in RELEVANCE_TOKENS}
    relevance = rel["[Relevant]"] / sum(rel.values())

    grounding = 0.0
    at = first_position(positions, GROUNDING_TOKENS) if use_groundness else None
    if at is not None:
        probs = [math.exp(logprob(at, t)) for t in GROUNDING_TOKENS]
        grounding = probs[0] / sum(probs) + 0.5 * (probs[1] / sum(probs))

    utility = 0.0
    at = first_position(positions, UTILITY_TOKENS) if use_utility else None
    if at is not None and not (long_form and long_form_utility_bug):
        probs = [math.exp(logprob(at, t)) for t in UTILITY_TOKENS]
        utility = sum(w * (p / sum(probs)) for w, p in zip(UTILITY_WEIGHTS, probs))

    seq_score = (response.cumulative_logprob or 0.0) / max(len(positions), 1)
    base = math.exp(seq_score) if use_seqscore else 0.0  # the sum in upstream's order, for bit-equal scores
    final = base + w_rel * relevance + w_sup * grounding + w_use * utility
    return Critique(final, relevance, grounding, utility, seq_score)

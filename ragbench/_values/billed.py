"""What a vendor billed for a call beyond the answer taken (`Billed`): the answers ragbench refused and asked again
(an unreadable body, a `response_problem`), a batch's result lines not taken, a replica's answers before another
answered. They are the call's cost all the same: added to the answer taken (`Billed.onto`), or carried by the call's
`EngineError` (`EngineError.billed`) where none was taken, so that results.json's `model_cost`, run.json's attempt
counts and --max-cost count every token billed."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Protocol, TypedDict, TypeVar

Answer = TypeVar("Answer")  # a Response, or an EngineError (a module below ragbench._values.llm_responses: no import)


class TokenCounts(TypedDict, total=False):
    """A Response's token counts, as a vendor's usage gives them (ragbench._engines.hosted.usage_counts)."""

    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int
    cache_write_tokens: int
    cache_write_1h_tokens: int


# a call's billed tokens: a Response's, a Step's (the last three kept apart when not 0: PROMPT_CACHE_COUNTS)
TOKEN_COUNTS = (
    "prompt_tokens",
    "completion_tokens",
    "cached_prompt_tokens",
    "cache_write_tokens",
    "cache_write_1h_tokens",
)


class Tokens(Protocol):
    """What holds a call's token counts (a Response, a Billed)."""

    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int
    cache_write_tokens: int
    cache_write_1h_tokens: int


@dataclass
class Billed:
    """Tokens a vendor billed for answers ragbench did not take (`answers` of them)."""

    answers: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0

    @classmethod
    def of(cls, tokens: TokenCounts | None) -> Billed:
        """One answer's token counts (a Response's fields), None or all 0: none billed."""
        return cls(1, **tokens) if tokens and any(tokens.values()) else cls()

    def add(self, tokens: Tokens, answers: int = 1) -> Billed:
        """These and the tokens of `answers` more answers (a Response) or of another Billed (its own)."""
        self.answers += tokens.answers if isinstance(tokens, Billed) else answers
        for count in TOKEN_COUNTS:
            setattr(self, count, getattr(self, count) + getattr(tokens, count))
        return self

    def onto(self, answer: Answer) -> Answer:
        """`answer` with these tokens: added to a Response's own, or to those its EngineError carries (a copy of
        it: one error may answer several requests)."""
        if not self.answers:
            return answer
        if not isinstance(answer, BaseException):
            for count in TOKEN_COUNTS:
                setattr(answer, count, getattr(answer, count) + getattr(self, count))
            return answer
        error = copy.copy(answer)
        carried = getattr(answer, "billed", None)
        error.billed = Billed().add(carried).add(self) if carried else self  # type: ignore[attr-defined]
        return error

"""What the scheduler counts of an attempt's calls (`CallStats`): answered, batched, cached, shared, failed, and the
tokens they were billed."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CallStats:
    calls: int = 0  # requests answered by an engine (not the cache)
    batches: int = 0
    cache_hits: int = 0
    shared: int = 0  # requests answered by an identical request already in flight
    errors: int = 0
    cache_errors: int = 0  # cache writes that failed (answers were still delivered)
    in_flight: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # of prompt_tokens, those the vendor's prompt cache served
    cache_write_tokens: int = 0  # of prompt_tokens, those written to it (Anthropic's)
    max_wait_batches: int = 0  # the longest a request waited: batches of its engine dispatched before its own

    def to_dict(self) -> dict[str, int]:
        out = dict(self.__dict__)
        out.pop("in_flight")
        out.pop("max_wait_batches")  # a maximum, not a count that attempts add up
        return out

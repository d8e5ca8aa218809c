"""A model's reply as an example's trace holds it: whole up to `TRACED_CHARS` characters, beyond that its first
`EXCERPT_CHARS`, with the lengths of the texts as sent (`full_chars`). Nothing bounds what an engine answers (a
hostile or broken server may answer 20 MB to a call for 1,024 tokens), and the sample keeping the trace is bounded
(json_values.MAX_BYTES): a few such replies in one example would make it unwritable, on every --resume (the reply
is cached). The whole reply is still what the caller gets, what the response cache keeps, and what the run's call
records carry for a replay (`response_data`, since the trace does not hold it as sent)."""

from __future__ import annotations

from collections.abc import Sequence

from .json_values import JsonObject

TRACED_CHARS = 1_000_000  # ~1,000 characters a token of a 1,024-token reply: no model's reply is cut
EXCERPT_CHARS = 10_000


def traced_texts(texts: Sequence[str]) -> JsonObject:
    """The `texts` of a trace step's response, and `full_chars` where one is over `TRACED_CHARS` (cut)."""
    if all(len(text) <= TRACED_CHARS for text in texts):
        return {"texts": list(texts)}
    return {
        "texts": [text if len(text) <= TRACED_CHARS else text[:EXCERPT_CHARS] for text in texts],
        "full_chars": [len(text) for text in texts],
    }

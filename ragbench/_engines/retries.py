"""When an engine tries a call again, whatever sends it (a hosted engine's request, the batch loop's creation of a
batch): ragbench's full-jitter backoff and the HTTP statuses worth another attempt.

Why the backoff is ragbench's own: the SDKs' waits are fixed (0.5 s x 2**retry up to 8 s for Stainless,
tenacity's 1 s x 2**retry for google-genai), which a benchmark or a test against a local server cannot shorten.
"""

from __future__ import annotations

import random

RETRIED_STATUS = frozenset({408, 409, 429})  # and every 5xx: the server is at fault, or busy


def backoff(retry: int, base: float, cap: float) -> float:
    """Full-jitter exponential backoff before retry number `retry` (0 for the first)."""
    return random.uniform(0.0, min(cap, base * 2**retry))


def retried_status(status: int) -> bool:
    """Whether an HTTP status is worth another attempt (as the SDKs retry: 408, 409, 429, 5xx)."""
    return status in RETRIED_STATUS or status >= 500

"""An LLM call as every layer imports it: the request (`Request`, its `Sampling`), the response (`Response`,
`TokenLogprobs`), the errors an engine returns in a request's slot, and what a system needs of its engine, each
defined in a module of its own (sampling, llm_request, llm_responses, engine_errors, engine_needs)."""

from __future__ import annotations

from .engine_errors import EngineError, RequestError, request_fault
from .engine_needs import EngineNeeds
from .llm_request import Request
from .llm_responses import PROMPT_CACHE_COUNTS, Response, TokenLogprobs
from .sampling import CUTOFFS, PENALTIES, SERVER_DEFAULTS, TOKEN_LIMIT_NAMES, Sampling, apply_stop

__all__ = [
    "CUTOFFS",
    "PENALTIES",
    "PROMPT_CACHE_COUNTS",
    "SERVER_DEFAULTS",
    "TOKEN_LIMIT_NAMES",
    "EngineError",
    "EngineNeeds",
    "Request",
    "RequestError",
    "Response",
    "Sampling",
    "TokenLogprobs",
    "apply_stop",
    "request_fault",
]

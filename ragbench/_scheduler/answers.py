"""An engine's answer as the scheduler takes it: one that does not answer its LLM request is that call's error (a
cached one, a miss), and what a request gets where the scheduler's own code raised."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from .._plugin_calls import exception_line
from .._values.engine_errors import EngineError
from .._values.llm_request import Request
from .._values.llm_responses import Response
from .._values.response_checks import billed_tokens, response_problem

if TYPE_CHECKING:
    from .._engines.base import Engine


def unfit(request: object, response: Response) -> bool:
    """Whether a cached response does not answer an LLM request (`response_problem`: e.g. log-probabilities
    asked and missing, stored before the server was fixed): a miss, asked again."""
    return isinstance(request, Request) and response_problem(response, request) is not None


Result = TypeVar("Result")


def scheduler_error(exc: Exception) -> EngineError:
    """What a request gets where the scheduler's own code raised while it owed the answer."""
    return EngineError(f"scheduler failed: {type(exc).__name__}: {exc}")


def checked(engine: Engine, request: object, result: Result) -> Result | EngineError:
    """An engine's answer to an LLM request as it arrives: one that does not answer it (`response_problem`) is
    the engine's error for that call, saying what was wrong: counted, never cached; its tokens, where they read as
    counts, are what the vendor billed for the failed call (`EngineError.billed`)."""
    if isinstance(request, Request) and not isinstance(result, Exception):
        try:
            problem = response_problem(result, request)
        except Exception as exc:  # an object of the engine's own whose fields raise when read
            problem = f"reading it raised {exception_line(exc)}"
        if problem is not None:
            error = EngineError(f"{engine.engine_id} answered no valid response: {problem}")
            error.billed = billed_tokens(result)  # refused, but billed: the call's cost
            return error
    return result

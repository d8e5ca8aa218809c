"""The errors an engine returns in a request's slot: `EngineError` (the engine failed: another replica may answer)
and `RequestError` (the request itself is at fault), and how the one behind Ray's wrapper is found."""

from __future__ import annotations

from .billed import Billed


class EngineError(RuntimeError):
    """A request the engine could not answer (after its own retries), because the engine failed: a
    server down or overloaded (connection errors, HTTP 5xx/429, timeouts), a dead actor, a crashed
    generate. Another replica of the model may answer it (`engines/replicas.py` fails over). `billed`: the
    tokens the vendor billed for answers of this call that were not taken (its cost although it failed)."""

    billed: Billed | None = None  # an instance's own where set (pickled with it, as Ray sends it)


class RequestError(EngineError):
    """A request no replica can answer because the request itself is at fault: HTTP 400/422, a
    prompt longer than the context, a parameter the engine was not started for. It fails once and
    demotes no replica. A class, not a flag, so that the kind survives pickling and Ray (whose task
    errors are instances of the original exception class)."""


def request_fault(error: BaseException) -> RequestError | None:
    """The `RequestError` behind `error` (itself, or the cause of Ray's error from a replica actor);
    None when the engine, not the request, is at fault."""
    for candidate in (getattr(error, "cause", None), error):  # Ray's wrapper is a RequestError too
        if isinstance(candidate, RequestError):
            return candidate
    return None

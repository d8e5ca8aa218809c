"""A ready replay file of one scoring component's exchanges, in the run folder.

Each line is one request and its answer in the `replay` engine's format: {"prompt" | "messages",
"sampling", "response"} (or "error" for a call that failed, so a replay fails it the same way). The
NLI model writes `nli_calls.jsonl` (the one copy of its exchanges), the N-th `--judge` writes
`judgeN_calls.jsonl`, whose lines refer to the samples' `judge_trace`, the one copy of a judge's
exchanges ({"ref", "error"?, "response_data"?}, see ragbench._replay.call_refs). `--nli replay:FILE` and
`--judge replay:FILE` then answer the same requests the same way offline (`ragbench score` re-scores
a run's predictions with them; a judge file is read with its run folder's samples).
"""

from __future__ import annotations

import threading
from pathlib import Path

from .._storage.jsonl import Appender, open_append
from .._values.json_values import JsonObject, JsonValue
from .call_refs import reference, reply_of, response_texts


def exchange_line(request: JsonObject, response: JsonValue = None, error: str | None = None) -> JsonObject:
    """A whole exchange: `request` is `Request.to_dict()`, `response` the reply text (or texts)."""
    return {**request, **({"response": response} if error is None else {"error": error})}


def call_line(
    request: JsonObject, response: JsonObject | None, error: str | None, held: JsonObject | None
) -> JsonObject:
    """One LLM call as a replay line: a `call_refs.reference` to the one copy of it when one holds it (`held`: the
    response data that copy gives back), else the whole exchange (`response`: `Response.to_dict()`, None when the
    call failed)."""
    if held is not None:
        return reference(request, response, held, error)
    if response is None:
        return exchange_line(request, error=error or "failed")
    return exchange_line(request, reply_of(response_texts(response)))


class ExchangeLog:
    """Appends exchanges to one JSONL file (thread-safe, flushed per line: a killed run keeps them)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._handle: Appender | None = open_append(self.path)
        self._lock = threading.Lock()

    def write(self, line: JsonObject) -> None:
        """Append an `exchange_line` or a `call_refs.reference`."""
        with self._lock:
            if self._handle is not None:
                self._handle.write(line)

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None

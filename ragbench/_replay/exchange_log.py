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
from collections.abc import Callable
from pathlib import Path

from .._storage.jsonl import Appender, open_append
from .._types import JsonObject, JsonValue
from .call_refs import reference, reply_of, response_texts, step_response_data


def exchange_line(request: JsonObject, response: JsonValue = None, error: str | None = None) -> JsonObject:
    """A whole exchange: `request` is `Request.to_dict()`, `response` the reply text (or texts)."""
    return {**request, **({"response": response} if error is None else {"error": error})}


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


class LoggingRecorder:
    """An `LLM` recorder that passes every call to the run's recorder and appends it to an ExchangeLog
    (a traced call as a reference to its step)."""

    def __init__(self, recorder: Callable[..., None], log: ExchangeLog) -> None:
        self.recorder, self.log = recorder, log

    def __call__(
        self,
        engine_id: str,
        request: JsonObject,
        response: JsonObject | None,
        error: str | None = None,
        step: JsonObject | None = None,
    ) -> None:
        self.recorder(engine_id, request, response, error, step=step)
        if step is not None:
            self.log.write(reference(request, response, step_response_data(step), error))
        elif response is None:
            self.log.write(exchange_line(request, error=error or "failed"))
        else:
            self.log.write(exchange_line(request, reply_of(response_texts(response))))

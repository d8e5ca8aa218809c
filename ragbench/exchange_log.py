"""A ready replay file of one scoring component's exchanges, in the run folder.

Each line is one request and its answer in the `replay` engine's format: {"prompt" | "messages",
"response"} (or "error" for a call that failed, so a replay fails it the same way). The NLI model
writes `nli_calls.jsonl`, the N-th `--judge` writes `judgeN_calls.jsonl`; `--nli replay:FILE` and
`--judge replay:FILE` then answer the same requests the same way offline (`ragbench score` re-scores
a run's predictions with them). calls/llm.jsonl holds the same exchanges for every role at once.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

from .jsonl import open_append


JUDGE_LOGS = "judge*_calls.jsonl"  # every judge's file, as a glob pattern


def judge_log_name(index: int) -> str:
    return f"judge{index}_calls.jsonl"


class ExchangeLog:
    """Appends exchanges to one JSONL file (thread-safe, flushed per line: a killed run keeps them)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._handle = open_append(self.path)
        self._lock = threading.Lock()

    def write(self, request: dict[str, Any], response: Any = None, error: str | None = None) -> None:
        """`request` is `Request.to_dict()` (its sampling is left out: a replay matches on the text)."""
        record = {k: v for k, v in request.items() if k != "sampling"}
        if error is None:
            record["response"] = response
        else:
            record["error"] = error
        with self._lock:
            if self._handle is not None:
                self._handle.write(record)

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None


class LoggingRecorder:
    """An `LLM` recorder that passes every call to the run's recorder and appends it to an ExchangeLog."""

    def __init__(self, recorder: Callable[..., None], log: ExchangeLog) -> None:
        self.recorder, self.log = recorder, log

    def __call__(self, engine_id: str, request: dict[str, Any], response: dict[str, Any] | None,
                 error: str | None = None) -> None:
        self.recorder(engine_id, request, response, error)
        if response is None:
            self.log.write(request, error=error or "failed")
        else:
            texts = response.get("texts") or [""]
            self.log.write(request, texts[0] if len(texts) == 1 else texts)

"""Recording a run's external calls, so that `ragbench --replay RUN_DIR` can re-execute it offline.

A run writes, next to its samples, one JSONL file per kind of call, in the formats the replaying
components read:

  calls/llm.jsonl        every LLM call of the system, judges and NLI model, in the `replay`
                         engine's format plus the full response, the engine that answered and its
                         role in the run ("model", "judge:0", "judge:1" ..., "nli", or a system's
                         own role name): {"role", "engine", "prompt" | "messages", "sampling",
                         "response" | "error", "response_data"}
  calls/retrieval.jsonl  every search: {"retriever", "query", "k", "ids", "scores"[, "docs"]};
                         documents are carried unless they are the example's own (`provided`)
  calls/tools.jsonl      every tool call (e.g. CRAG's KG API): {"task", "tool", "method", "kind"
                         (sync | async), "args", "kwargs", "result" | "error"}
  calls/tools.json       the tools each task set up: {task: [tool names]}

Lines are appended and flushed as calls finish (a killed run keeps what it recorded). Calls that
are repeated (cache hits, identical calls of several examples) are recorded each time they are
made; replay takes the first matching line.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from .jsonl import open_append
from .types import Document

CALLS_DIR = "calls"
LLM_FILE = "llm.jsonl"
RETRIEVAL_FILE = "retrieval.jsonl"
TOOLS_FILE = "tools.jsonl"
TOOL_NAMES_FILE = "tools.json"


class CallRecorder:
    """Appends call records to the files of a run's `calls/` folder (thread-safe)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._handles: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _write(self, name: str, record: dict[str, Any]) -> None:
        with self._lock:
            handle = self._handles.get(name)
            if handle is None:
                handle = self._handles[name] = open_append(self.folder / name)
            handle.write(record)

    def for_role(self, role: str) -> "LlmRecorder":
        return LlmRecorder(self, role)

    def llm(self, role: str, engine_id: str, request: dict[str, Any], response: dict[str, Any] | None,
            error: str | None = None) -> None:
        """`request` is `Request.to_dict()`, `response` is `Response.to_dict()` (None when it failed)."""
        record: dict[str, Any] = {"role": role, "engine": engine_id, **request}
        if response is None:
            record["error"] = error or "failed"
        else:
            texts = response.get("texts") or [""]
            record["response"] = texts[0] if len(texts) == 1 else texts
            record["response_data"] = response
        self._write(LLM_FILE, record)

    def retrieval(self, retriever: str, query: str, k: int, docs: list[Document], carry_docs: bool) -> None:
        record: dict[str, Any] = {"retriever": retriever, "query": query, "k": k, "ids": [d.id for d in docs],
                                  "scores": [d.score for d in docs]}
        if carry_docs:
            record["docs"] = [d.to_dict() for d in docs]
        self._write(RETRIEVAL_FILE, record)

    def tool_names(self, tools: dict[str, list[str]]) -> None:
        """The tools each task set up, so a replay gives every task the same names."""
        (self.folder / TOOL_NAMES_FILE).write_text(json.dumps(tools, indent=1) + "\n", encoding="utf-8")

    def tool(self, task: str, tool: str, method: str, args: list[Any], kwargs: dict[str, Any], *,
             kind: str = "async", result: Any = None, error: str | None = None) -> None:
        record: dict[str, Any] = {"task": task, "tool": tool, "method": method, "kind": kind, "args": args,
                                  "kwargs": kwargs}
        if error is None:
            record["result"] = result
        else:
            record["error"] = error
        self._write(TOOLS_FILE, record)

    def close(self) -> None:
        with self._lock:
            for handle in self._handles.values():
                handle.close()
            self._handles.clear()


class LlmRecorder:
    """A recorder bound to one role, handed to an `LLM`."""

    def __init__(self, recorder: CallRecorder, role: str) -> None:
        self.recorder, self.role = recorder, role

    def __call__(self, engine_id: str, request: dict[str, Any], response: dict[str, Any] | None,
                 error: str | None = None) -> None:
        self.recorder.llm(self.role, engine_id, request, response, error)

"""Recording a run's external calls, so that `ragbench --replay RUN_DIR` can re-execute it offline.

A run writes, next to its samples, one JSONL file per kind of call, in the formats the replaying
components read:

  calls/llm.jsonl        every LLM call of the system, judges and NLI model: the engine that
                         answered, its role in the run ("model", "judge:0", "judge:1" ..., "nli",
                         or a system's own role name) and a reference to the one copy of the
                         exchange (the sample's trace, or nli_calls.jsonl; ragbench._replay.call_refs):
                         {"role", "engine", "ref", "error"?, "response_data"?}. A call held
                         nowhere else is written whole, in the `replay` engine's format plus the
                         full response: {"role", "engine", "prompt" | "messages", "sampling",
                         "response" | "error", "response_data"}
  calls/retrieval.jsonl  every search: {"retriever", "query", "k", "ids", "scores"[, "docs"][, "example"]}
                         ("example": the example's id, when the search was among its own documents);
                         documents are carried unless they are the example's own (`provided`),
                         each once per run: a line leaves out a document an earlier line carried
                         (same id and content), and a replay looks it up there
  calls/tools.jsonl      every tool call (e.g. CRAG's KG API): {"task", "tool", "method", "kind"
                         (sync | async), "args", "kwargs", "result" | "error"}
  calls/tools.json       the tools each task set up: {task: [tool names]}
  calls/app.jsonl        every answer of an application a system calls (ragbench._apps), written as soon as it
                         returned: {"task", "id", "example_sha256", "reply", "spans", "seconds"}; `--resume`
                         replays it rather than calling the application again for that example
  calls/app_spans.jsonl  each attempt's count of an application's spans by task: those joined to examples and those
                         that joined none (unjoined, late, rejected, malformed exports)

Lines are appended and flushed as calls finish (a killed run keeps what it recorded; a reference
resolves once its example's sample is written). Calls that are repeated (cache hits, identical
calls of several examples) are recorded each time they are made; replay takes the first matching
line.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

from .._storage.files import write_atomically
from .._storage.jsonl import Appender, open_append
from .._types import Document
from .._values.json_values import JsonObject, JsonValue
from .call_refs import log_response_data, response_texts, step_response_data
from .exchange_log import ExchangeLog, call_line

CALLS_DIR = "calls"
LLM_FILE = "llm.jsonl"
RETRIEVAL_FILE = "retrieval.jsonl"
TOOLS_FILE = "tools.jsonl"
TOOL_NAMES_FILE = "tools.json"
APP_FILE = "app.jsonl"
APP_SPANS_FILE = "app_spans.jsonl"


class CallRecorder:
    """Appends call records to the files of a run's `calls/` folder (thread-safe)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._handles: dict[str, Appender] = {}
        self._lock = threading.Lock()
        self._carried: dict[str, bytes] = {}  # document id -> digest of the content first carried under it

    def _write(self, name: str, record: JsonObject) -> None:
        with self._lock:
            handle = self._handles.get(name)
            if handle is None:
                handle = self._handles[name] = open_append(self.folder / name)
            handle.write(record)

    def for_role(self, role: str, logged: bool = False, log: ExchangeLog | None = None) -> LlmRecorder:
        """The recorder of one role's calls; `logged`: the role's answered calls are held in its
        exchange log (the NLI model's nli_calls.jsonl); `log`: an exchange log it appends every call to (a
        judge's judgeN_calls.jsonl)."""
        return LlmRecorder(self, role, logged, log)

    def llm(self, role: str, engine_id: str, line: JsonObject) -> None:
        """`line`: the call as `exchange_log.call_line` gives it (with "response_data" when written whole)."""
        self._write(LLM_FILE, {"role": role, "engine": engine_id, **line})

    def retrieval(
        self, retriever: str, query: str, k: int, docs: list[Document], carry_docs: bool, example: str | None = None
    ) -> None:
        record: JsonObject = {
            "retriever": retriever,
            "query": query,
            "k": k,
            "ids": [d.id for d in docs],
            "scores": [d.score for d in docs],
        }
        if example is not None:  # a search among one example's own documents
            record["example"] = example
        if carry_docs:
            record["docs"] = [d.to_dict() for d in docs if self._first_carried(d)]
        self._write(RETRIEVAL_FILE, record)

    def _first_carried(self, doc: Document) -> bool:
        """Whether `doc` must be carried: no earlier line carried this id with this content (the
        search's score aside). A different content under a known id is carried each time."""
        if doc.id is None:
            return True
        # The digest lives only in this run's memory, so the content's repr serves (several times cheaper than
        # canonical JSON, which every document of every search paid).
        content = repr((doc.title, doc.text, doc.url, sorted(doc.metadata.items(), key=lambda item: str(item[0]))))
        digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).digest()[:16]
        with self._lock:
            first = self._carried.get(str(doc.id))
            if first is None:
                self._carried[str(doc.id)] = digest
                return True
        return first != digest

    def tool_names(self, tools: dict[str, list[str]]) -> None:
        """The tools each task set up, so a replay gives every task the same names."""
        write_atomically(self.folder / TOOL_NAMES_FILE, json.dumps(tools, indent=1) + "\n")

    def tool(
        self,
        task: str,
        tool: str,
        method: str,
        args: list[JsonValue],
        kwargs: JsonObject,
        *,
        kind: str = "async",
        result: JsonValue = None,
        error: str | None = None,
    ) -> None:
        record: JsonObject = {
            "task": task,
            "tool": tool,
            "method": method,
            "kind": kind,
            "args": args,
            "kwargs": kwargs,
        }
        if error is None:
            record["result"] = result
        else:
            record["error"] = error
        self._write(TOOLS_FILE, record)

    def app_call(self, record: JsonObject) -> None:
        """An application's answer to one example (ragbench._apps.replay's line), written at once."""
        self._write(APP_FILE, record)

    def app_spans(self, record: JsonObject) -> None:
        """An attempt's count of an application's spans on one task (ragbench._apps.collector's report)."""
        self._write(APP_SPANS_FILE, record)

    def close(self) -> None:
        with self._lock:
            for handle in self._handles.values():
                handle.close()
            self._handles.clear()


class LlmRecorder:
    """A recorder bound to one role, handed to an `LLM`: a traced call (`step`, as its trace holds
    it) is recorded as a reference to that step, an answered call of a `logged` role as a reference
    to its exchange log line; each call is appended to `log` too, when one is given."""

    def __init__(self, recorder: CallRecorder, role: str, logged: bool = False, log: ExchangeLog | None = None) -> None:
        self.recorder, self.role, self.logged, self.log = recorder, role, logged, log

    def __call__(
        self,
        engine_id: str,
        request: JsonObject,
        response: JsonObject | None,
        error: str | None = None,
        step: JsonObject | None = None,
    ) -> None:
        if step is not None:
            held = step_response_data(step)
        elif self.logged and response is not None:
            held = log_response_data({"response": response_texts(response)[0]})
        else:
            held = None
        line = call_line(request, response, error, held)
        whole = held is None and response is not None  # written whole: with the full response
        self.recorder.llm(self.role, engine_id, {**line, "response_data": response} if whole else line)
        if self.log is not None:
            self.log.write(line)

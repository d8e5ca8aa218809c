"""The streaming paths of the test RAG service (tests/support/rag_service.py): Server-Sent Events written by hand on
the socket - each write flushed on its own, as chunked HTTP or, where a path says so, as a body the connection's
close ends - so a test decides how the answer is split into chunks (`SsePlan.pieces`), where the bytes of the whole
stream are split across writes (`SsePlan.cuts`) and which line ending ends a line (`SsePlan.newline`).

`/sse/v1/chat/completions`: OpenAI's chunks (a role chunk carrying Azure's `delta.context.citations`, a chunk a
piece, a finish chunk, the usage chunk, `data: [DONE]`); `/sse-last/v1/chat/completions`: the same, the passages a
top-level `passages` of the usage chunk instead. `/sse-ask`: LangServe's shape for the `json` preset (`event:
metadata`, `event: data` with `{"chunk": piece}` each, one with `{"sources": [...], "meta": {"model", "usage"}}`, `event:
end`); `/sse-ask-done`: no `event: end`, a last `{"type": "done", "meta": ...}` instead (its `meta` there alone). Faults: `/sse-cut` (two chunks, then the connection closed inside
the chunked body), `/sse-eof` (two chunks, then the connection closed: a body the close ends, no `[DONE]`),
`/sse-forever` (a chunk every 10 ms until the service closes), `/sse-not-json` and `/sse-error` (an event that is not
JSON, an error event, after one chunk), `/sse-plain` (a JSON reply to a request for a stream); any path cuts the
stream of the examples in `SsePlan.cut_ids` as `/sse-cut` does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from support.rag_service import RagService

OPENAI_PATHS = ("/sse/v1/chat/completions", "/sse-last/v1/chat/completions")
FAULTS = ("/sse-cut", "/sse-eof", "/sse-forever", "/sse-not-json", "/sse-error", "/sse-plain")


@dataclass
class SsePlan:
    """How the service streams: the answer's pieces (None: the answer split after its first character), the byte
    offsets of the stream its writes are split at (None: a write an event), the line ending."""

    pieces: list[str] | None = None
    cuts: list[int] | None = None
    newline: str = "\n"
    cut_ids: set[str] = field(default_factory=set)  # the examples (ids) whose stream is cut as /sse-cut's is
    sent: list[bytes] = field(default_factory=list)  # the last stream's writes, as sent
    bodies: list[dict[str, Any]] = field(default_factory=list)  # the requests streamed to


def event(data: Any, newline: str, name: str | None = None) -> bytes:
    lines = ([f"event: {name}"] if name else []) + (
        [f"data: {data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)}"] if data is not None else []
    )
    return "".join(line + newline for line in lines).encode() + newline.encode()


def openai_events(plan: SsePlan, answer: str, passages: list[dict[str, Any]], last: bool) -> list[bytes]:
    pieces = plan.pieces if plan.pieces is not None else [answer[:1], answer[1:]]
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "toy-model"}
    citations = [{"content": p["text"], "title": p["title"], "chunk_id": p["id"]} for p in passages]
    role: dict[str, Any] = {"role": "assistant", "content": ""}
    if not last:
        role["context"] = {"citations": citations}
    chunks: list[dict[str, Any]] = [{**head, "choices": [{"index": 0, "delta": role, "finish_reason": None}]}]
    chunks += [
        {**head, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]} for piece in pieces
    ]
    chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    usage = {
        **head,
        "choices": [],
        "usage": {"prompt_tokens": 12, "completion_tokens": len(pieces), "total_tokens": 12 + len(pieces)},
    }
    if last:
        usage["passages"] = passages
    chunks.append(usage)
    newline = plan.newline
    return (
        [b": keep-alive" + newline.encode() + newline.encode()]
        + [event(chunk, newline) for chunk in chunks]
        + [event("[DONE]", newline)]
    )


def json_events(
    plan: SsePlan, answer: str, passages: list[dict[str, Any]], done: bool, meta: dict[str, Any]
) -> list[bytes]:
    pieces = plan.pieces if plan.pieces is not None else [answer[:1], answer[1:]]
    newline = plan.newline
    out = [event({"run_id": "run-1"}, newline, "metadata")]
    out += [event({"chunk": piece}, newline, "data") for piece in pieces]
    out.append(event({"sources": passages} | ({} if done else {"meta": meta}), newline, "data"))
    out.append(event({"type": "done", "meta": meta}, newline, "data") if done else event(None, newline, "end"))
    return out


def split(stream: bytes, writes: list[bytes], cuts: list[int] | None) -> list[bytes]:
    """The stream's bytes as written: as `writes` (one an event), or cut at `cuts`."""
    if cuts is None:
        return writes
    bounds = [0, *sorted({cut for cut in cuts if 0 < cut < len(stream)}), len(stream)]
    return [stream[a:b] for a, b in zip(bounds, bounds[1:])]


class SseWriter:
    """A streamed reply on the handler's socket: chunked HTTP (each write a chunk), or a body the close ends."""

    def __init__(self, handler: BaseHTTPRequestHandler, chunked: bool = True) -> None:
        self.handler, self.chunked = handler, chunked
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
        handler.send_header("Cache-Control", "no-cache")
        if chunked:
            handler.send_header("Transfer-Encoding", "chunked")
        else:
            handler.send_header("Connection", "close")
            handler.close_connection = True
        handler.end_headers()

    def write(self, data: bytes) -> None:
        if not data:
            return
        self.handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if self.chunked else data)
        self.handler.wfile.flush()

    def end(self) -> None:
        if self.chunked:
            self.handler.wfile.write(b"0\r\n\r\n")
            self.handler.wfile.flush()

    def cut(self) -> None:
        """The connection closed where the stream is (a chunked body left unfinished)."""
        self.handler.close_connection = True
        self.handler.wfile.flush()


def sse_route(handler: BaseHTTPRequestHandler, service: RagService, path: str, request: dict[str, Any]) -> None:
    plan = service.sse
    if path == "/sse-plain":
        data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Olm"}}]}).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
        return
    plan.bodies.append(request)
    question = request["query"] if path.startswith("/sse-ask") else request["messages"][-1]["content"]
    answer, passages = service.answer(question, 2)
    if path.startswith("/sse-ask"):
        writes = json_events(plan, answer, passages, path == "/sse-ask-done", service.reported.fields())
    else:
        writes = openai_events(plan, answer, passages, last=path.startswith("/sse-last"))
    writer = SseWriter(handler, chunked=path != "/sse-eof")
    if handler.headers.get("ragbench-example-id") in plan.cut_ids:
        path = "/sse-cut"
    try:
        if path in OPENAI_PATHS or path.startswith("/sse-ask"):
            stream = b"".join(writes)
            plan.sent = split(stream, writes, plan.cuts)
            for data in plan.sent:
                writer.write(data)
            writer.end()
        elif path in ("/sse-cut", "/sse-eof"):
            for data in writes[:3]:  # the comment, the role chunk, the first piece
                writer.write(data)
            writer.cut()
        elif path == "/sse-forever":
            writer.write(writes[1])
            while not service.closing.wait(0.01):
                writer.write(event({"choices": [{"index": 0, "delta": {"content": "Olm "}}]}, "\n"))
        else:
            writer.write(writes[1])
            bad = (
                event('{"choices": [oops', "\n")
                if path == "/sse-not-json"
                else event({"error": {"message": "the model is\noverloaded", "type": "server_error"}}, "\n")
            )
            writer.write(bad)
            while not service.closing.wait(0.01):  # the stream stays open: the client ends it
                writer.write(b": ping\n\n")
    except OSError:  # the client closed the connection (it gave up on the stream)
        handler.close_connection = True

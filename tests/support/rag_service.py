"""A small RAG application served over HTTP for the `http` system's tests: the standard library's threaded server
on 127.0.0.1, instrumented with the OpenTelemetry SDK as a user's service is - a tracer provider of its own whose
server span continues the request's `traceparent`, its spans exported over OTLP/HTTP (the SDK's exporter, to the
endpoint the request's `ragbench-otlp-endpoint` header names, or to one given when the service starts) and, for
comparison, to an in-memory exporter.

Paths: `/v1/chat/completions` (an OpenAI-compatible endpoint, the passages in Azure's `context.citations`), `/ask`
(a JSON API: {"query", "k"} -> {"result": {"text", "sources"}}), and ones that misbehave: `/500` (always a 500),
`/flaky` (a 503 on each example's first request), `/hang` (never answers until the service closes), `/wrong` (JSON of
another shape), `/echo-auth` (a 500 quoting the request's Authorization header), `/stream` (a body that never ends), `/not-json`, `/stray-spans` (its spans in a trace of its own),
`/bad-otlp` (posts what is not OTLP to the receiver before answering; the statuses it got are in `otlp_statuses`).
Paths under `/sse` stream their answer as Server-Sent Events, as `sse` (an `SsePlan`) says (tests/support/sse_routes.py).
The OpenAI-compatible reply names its `model` and `usage` (`reported`: what it reports, the usage left out where it is
`NO_USAGE`), the JSON API's are under `meta`; the chat span carries its tokens unless `span_tokens` is false.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.request import Request, urlopen

from opentelemetry import context as otel_context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from support.rag_apps import CORPUS, words
from support.sse_routes import SsePlan, sse_route

NO_USAGE = object()  # `Reported.usage`: the reply holds no usage at all


@dataclass
class Reported:
    """What the service's replies report of the model calls behind them: the model, and the usage as sent."""

    model: str = "toy-model"
    usage: Any = field(default_factory=lambda: {"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14})

    def fields(self) -> dict[str, Any]:
        return {"model": self.model} | ({} if self.usage is NO_USAGE else {"usage": self.usage})


class RagService:
    """The service's state: its tracer provider and exporters, what it was asked, and how it ends."""

    def __init__(self, otlp_endpoint: str | None = None, batch: bool = False) -> None:
        self.memory = InMemorySpanExporter()
        self.provider = TracerProvider(resource=Resource.create({"service.name": "rag-service"}))
        self.provider.add_span_processor(SimpleSpanProcessor(self.memory))
        self.tracer = self.provider.get_tracer("rag_service")
        self.batch = batch  # BatchSpanProcessor (the SDK's default: export every few seconds) or SimpleSpanProcessor
        self._exporting: str | None = None
        self._lock = threading.Lock()
        self.hits: Counter[str] = Counter()
        self.otlp_statuses: list[int] = []
        self.closing = threading.Event()
        self.sse = SsePlan()
        self.reported = Reported()
        self.span_tokens = True
        if otlp_endpoint is not None:
            self.export_to(otlp_endpoint)

    def export_to(self, endpoint: str) -> None:
        """Spans exported over OTLP/HTTP to `endpoint` from now on (once: a service configures its exporter once)."""
        with self._lock:
            if self._exporting is not None:
                return
            self._exporting = endpoint
            exporter = OTLPSpanExporter(endpoint=endpoint)
            processor = (
                BatchSpanProcessor(exporter, schedule_delay_millis=50) if self.batch else SimpleSpanProcessor(exporter)
            )
            self.provider.add_span_processor(processor)

    def answer(self, query: str, k: int) -> tuple[str, list[dict[str, Any]]]:
        """The top-k passages by shared words, traced (OpenInference RETRIEVER, then a GenAI chat span), and the top
        passage's first word as the answer."""
        with self.tracer.start_as_current_span("search") as span:
            span.set_attribute("openinference.span.kind", "RETRIEVER")
            span.set_attribute("input.value", query)
            ranked = sorted(CORPUS, key=lambda p: (-len(words(query) & words(p["text"])), p["id"]))[:k]
            for n, passage in enumerate(ranked):
                span.set_attribute(f"retrieval.documents.{n}.document.id", passage["id"])
                span.set_attribute(f"retrieval.documents.{n}.document.content", passage["text"])
        with self.tracer.start_as_current_span("chat toy-model") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.request.model", "toy-model")
            if self.span_tokens:
                chat.set_attribute("gen_ai.usage.input_tokens", len(query.split()) + 10)
                chat.set_attribute("gen_ai.usage.output_tokens", 1)
            chat.set_attribute(
                "gen_ai.input.messages", json.dumps([{"role": "user", "parts": [{"type": "text", "content": query}]}])
            )
        return ranked[0]["text"].split()[0], ranked

    def close(self) -> None:
        self.closing.set()
        self.provider.shutdown()


def _handler(service: RagService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def reply(self, status: int, body: Any) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            path = self.path
            service.hits[path] += 1
            if self.headers.get("ragbench-otlp-endpoint"):
                service.export_to(self.headers["ragbench-otlp-endpoint"])
            parent = (
                otel_context.Context()
                if path == "/stray-spans"
                else TraceContextTextMapPropagator().extract(dict(self.headers))
            )
            with service.tracer.start_as_current_span(f"POST {path}", context=parent, kind=SpanKind.SERVER):
                self.route(path, request)

        def route(self, path: str, request: dict[str, Any]) -> None:
            example = self.headers.get("ragbench-example-id", "")
            if path.startswith("/sse"):
                sse_route(self, service, path, request)
            elif path == "/500":
                self.reply(500, {"error": "the index is down"})
            elif path == "/flaky" and service.hits[f"flaky {example}"] == 0:
                service.hits[f"flaky {example}"] += 1
                self.reply(503, {"error": "busy"})
            elif path == "/hang":
                service.closing.wait()
            elif path == "/echo-auth":  # a server that quotes the request's credentials in its error
                self.reply(500, {"error": f"bad token {self.headers.get('Authorization')}"})
            elif path == "/wrong":
                self.reply(200, {"result": {"message": "Olm"}})
            elif path == "/not-json":
                self.reply(200, b"<html>Olm</html>")
            elif path == "/stream":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"answer": "')
                while not service.closing.wait(0.01):
                    self.wfile.write(b"Olm Olm Olm ")
                    self.wfile.flush()
            elif path == "/ask":
                answer, passages = service.answer(request["query"], int(request.get("k", 2)))
                self.reply(200, {"result": {"text": answer, "sources": passages}, "meta": service.reported.fields()})
            else:
                if path == "/bad-otlp":
                    endpoint = self.headers["ragbench-otlp-endpoint"]
                    for data, kind in (
                        (b"not protobuf at all \xff", "application/x-protobuf"),
                        (b"{", "application/json"),
                    ):
                        try:
                            urlopen(Request(endpoint, data=data, headers={"Content-Type": kind}), timeout=30)
                            service.otlp_statuses.append(200)
                        except Exception as exc:
                            service.otlp_statuses.append(getattr(exc, "code", 0))
                question = request["messages"][-1]["content"]
                answer, passages = service.answer(question, 2)
                citations = [{"content": p["text"], "title": p["title"], "chunk_id": p["id"]} for p in passages]
                message = {"role": "assistant", "content": answer, "context": {"citations": citations}}
                choices = [{"index": 0, "message": message, "finish_reason": "stop"}]
                self.reply(200, {"choices": choices, **service.reported.fields()})

    return Handler


@contextmanager
def rag_service(otlp_endpoint: str | None = None, batch: bool = False) -> Iterator[tuple[str, RagService]]:
    """The service on 127.0.0.1; yields its base URL and its state."""
    service = RagService(otlp_endpoint, batch)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(service))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", service
    finally:
        service.close()
        server.shutdown()
        server.server_close()

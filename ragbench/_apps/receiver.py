"""The OTLP/HTTP receiver a run starts for an application that runs elsewhere (the `http` system): a real HTTP server
on 127.0.0.1 (an ephemeral port unless one is asked), `POST /v1/traces` taking OTLP trace exports in binary protobuf
or JSON (gzip-compressed or not), each span handed to the run's collector (ragbench._apps.collector), which joins it
to its example by trace id.

An export that is not OTLP is answered 400 with why (and counted), a body over `MAX_BODY` 413, another path 404;
spans with ids of the wrong length are left out and reported in OTLP's partial success. The server runs on threads of
its own (the standard library's ThreadingHTTPServer, as the viewer's) and is closed by the run that started it,
however the run ends (`close`).
"""

from __future__ import annotations

import gzip
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .collector import SpanCollector
from .otlp import JSON_TYPES, MalformedOtlp, parse_export

TRACES_PATH = "/v1/traces"
MAX_BODY = 64 * 1024 * 1024  # an export of more is refused (413): the collector's exporters batch far less


class OtlpReceiver:
    """An OTLP/HTTP trace receiver on 127.0.0.1:`port` (0: a free port), its spans delivered to `collector`."""

    def __init__(self, collector: SpanCollector, port: int = 0, host: str = "127.0.0.1") -> None:
        self.collector = collector
        handler = type("Handler", (_Handler,), {"collector": collector})
        try:
            self._server = ThreadingHTTPServer((host, port), handler)
        except OSError as exc:
            raise OSError(exc.errno, f"the OTLP receiver cannot listen on {host}:{port} ({exc.strerror})") from None
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="ragbench-otlp", daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        """The URL exporters send traces to (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT's form)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{TRACES_PATH}"

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def close(self) -> None:
        """The server stopped and its socket closed (once; closing again does nothing)."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()


class _Handler(BaseHTTPRequestHandler):
    collector: SpanCollector
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return  # a request is no line on the run's console

    def _answer(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        if self.path.split("?")[0] != TRACES_PATH:
            self._answer(404, f"ragbench's OTLP receiver takes traces at {TRACES_PATH}\n".encode())
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._refuse(411, "a Content-Length is needed")
            return
        if length > MAX_BODY:
            self._refuse(413, f"an export of {length:,} bytes is over {MAX_BODY:,}")
            return
        body = self.rfile.read(length)
        content_type = self.headers.get("Content-Type", "")
        try:
            if self.headers.get("Content-Encoding", "").lower() == "gzip":
                body = gzip.decompress(body)
            export = parse_export(body, content_type)
        except (MalformedOtlp, OSError, EOFError, zlib.error) as exc:
            self._refuse(400, str(exc))
            return
        self.collector.deliver(export.spans)
        if export.rejected:
            self.collector.count("rejected", export.rejected)
        self._partial_success(export.rejected, content_type)

    def _refuse(self, status: int, why: str) -> None:
        self.collector.count("malformed_exports")
        self._answer(status, f"ragbench's OTLP receiver: {why}\n".encode())

    def _partial_success(self, rejected: int, content_type: str) -> None:
        from google.protobuf import json_format
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        response = ExportTraceServiceResponse()
        if rejected:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = "spans whose trace id is not 16 bytes or span id not 8"
        if content_type.split(";")[0].strip().lower() in JSON_TYPES:
            self._answer(200, json_format.MessageToJson(response).encode(), "application/json")
        else:
            self._answer(200, response.SerializeToString(), "application/x-protobuf")

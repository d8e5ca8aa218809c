"""A local HTTP server of a handler class, served from a thread of the test process for as long as a `with` block;
`send_json`, a handler's JSON reply. Standard library only: a recording script run where ragbench is not installed
imports it too."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], poll_seconds: float = 0.5) -> Iterator[str]:
    """`handler` served on 127.0.0.1 at a free port: its base URL; stopped and closed at the block's end."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(poll_seconds,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
    """`payload` as the reply's JSON body, with its status, type and length."""
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)

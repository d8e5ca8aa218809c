"""The user's own applications of the system x task matrix (tests/run/test_matrix.py): a Python function (`python`)
and an HTTP service (`http`) that answer each example of a cell as the cell's predictions file does for `recorded`
(the scripted output and the example's first document), looked up by task and example id in `ANSWERS` (or by the
question in `BY_QUESTION`), which the cell's configuration fills (tests/support/matrix_fixtures.cell_config); the
framework systems' applications are in matrix_framework_apps.py."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWERS: dict[tuple[str, str], dict[str, Any]] = {}  # (task, example id) -> {"answer", "passages"}
BY_QUESTION: dict[str, dict[str, Any]] = {}  # the cell's question -> its answer (an engine asked the question alone)
_SERVICE: list[str] = []


def answer(id: str, task: str) -> dict[str, Any]:
    """The `python` system's function."""
    return ANSWERS[(task, id)]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        asked = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = json.dumps(ANSWERS[(asked["task"], asked["id"])]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def service_url() -> str:
    """The `http` system's service (one a process, started on first use): POST {"task", "id"} -> its answer."""
    if not _SERVICE:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        _SERVICE.append(f"http://127.0.0.1:{server.server_address[1]}/answer")
    return _SERVICE[0]

"""A fake Jina Reader on 127.0.0.1 for DeepResearch Bench's FACT (the recorder points the released scrape.py at it,
the tests ragbench's `drb_fact` reader=jina): `GET /URL` answered from a pages file of `{"url", "title",
"description", "content"}` lines as Jina answers with `Accept: application/json` (`{"code", "status", "data"}`),
404 for a URL it does not hold; every request's path and the headers the script sets are kept."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SENT_HEADERS = ("Accept", "Authorization", "X-Timeout", "X-With-Generated-Alt")


class FakeJina:
    def __init__(self, pages: Path) -> None:
        lines = pages.read_text(encoding="utf-8").splitlines()
        self.pages = {page["url"]: page for page in map(json.loads, lines)}
        self.requests: list[dict[str, Any]] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.fake = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        fake: FakeJina = self.server.fake  # type: ignore[attr-defined]
        url = self.path[1:]
        fake.requests.append({"path": self.path, "headers": {h: self.headers.get(h) for h in SENT_HEADERS}})
        page = fake.pages.get(url)
        if page is None:
            status, body = 404, {"code": 404, "status": 40400, "data": None, "readableMessage": "not found"}
        else:
            data = {"title": page["title"], "description": page["description"], "url": url, "content": page["content"]}
            status, body = 200, {"code": 200, "status": 20000, "data": data}
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

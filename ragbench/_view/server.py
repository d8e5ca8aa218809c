"""`ragbench view RUNS...`: the viewer served by the standard library's ThreadingHTTPServer (no web
framework dependency): the page and its scripts from the package, /api/<key> from the run files."""

from __future__ import annotations

import logging
import mimetypes
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import unquote, urlsplit

from .._storage.jsonl import strict_json
from .page_data import ErrorBody, Page
from .site import NotFound, Site

STATIC = resources.files("ragbench._view") / "static"
ASSETS = ("index.html", "app.js", "plots.js", "style.css")
# Defence in depth under the escaping: no inline script, nothing loaded from elsewhere.
POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'"
log = logging.getLogger("ragbench._view")


def asset(name: str) -> bytes:
    return (STATIC / name).read_bytes()


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The Host headers the viewer answers: this machine by its loopback names, its host name, or the
    --host it serves on, with its port or none. A page of another site that rebinds its own name to
    127.0.0.1 (DNS rebinding) sends its own name, and is refused: it cannot read the runs through /api/."""
    names = {
        "localhost",
        "127.0.0.1",
        "[::1]",
        socket.gethostname().lower(),
        f"[{host.lower()}]" if ":" in host else host.lower(),
    }
    return frozenset(names | {f"{name}:{port}" for name in names})


class Handler(BaseHTTPRequestHandler):
    site: Site
    hosts: frozenset[str]

    def handle(self) -> None:
        """A request the browser gave up on (a page left before its data came, a reload) closes the
        connection under us: nothing failed here, so no traceback, one debug line at most."""
        try:
            super().handle()
        except ConnectionError as exc:  # BrokenPipe, ConnectionReset, ConnectionAborted
            log.debug("ragbench view: %s %s: the browser closed the connection (%s)", self.command, self.path, exc)

    def do_GET(self) -> None:  # http.server's name
        if (self.headers.get("Host") or "").strip().lower() not in self.hosts:
            return self.send_json(
                421,
                {
                    "error": "this viewer answers only requests to the address it serves on "
                    "(open the URL it printed, or serve with --host NAME)"
                },
            )
        path = unquote(urlsplit(self.path).path)
        if path in ("/", "/index.html"):
            return self.send(200, asset("index.html"), "text/html; charset=utf-8")
        if path.startswith("/static/") and path[len("/static/") :] in ASSETS:
            name = path[len("/static/") :]
            return self.send(200, asset(name), (mimetypes.guess_type(name)[0] or "text/plain") + "; charset=utf-8")
        if path.startswith("/api/"):
            return self.send_json(*self.api(path[len("/api/") :]))
        self.send_json(404, {"error": f"not found: {path}"})

    def api(self, key: str) -> tuple[int, Page | ErrorBody]:
        """(status, data) of /api/<key>; the sending stays outside, so a connection the browser closed
        is not taken for a failure of the data."""
        try:
            return 200, self.site.data(key)
        except NotFound as exc:
            return 404, {"error": f"not found: {exc.args[0] if exc.args else key}"}
        except Exception as exc:  # one bad file must not take the viewer down: say what failed
            return 500, {"error": f"{type(exc).__name__}: {exc}"}

    def send_json(self, status: int, data: Page | ErrorBody) -> None:
        self.send(status, strict_json(data).encode(), "application/json; charset=utf-8")

    def send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", POLICY)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")  # a run in progress changes between requests
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per request is noise here
        pass


def make_server(site: Site, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    handler: type[Handler] = type("SiteHandler", (Handler,), {"site": site})
    server = ThreadingHTTPServer((host, port), handler)
    handler.hosts = allowed_hosts(host, server.server_address[1])
    server.daemon_threads = True
    return server


def serve(site: Site, host: str, port: int) -> None:
    server = make_server(site, host, port)
    threading.Thread(target=site.warm, daemon=True).start()
    print(
        f"ragbench view: {len(site.runs)} run(s) at http://{host}:{server.server_address[1]}/ (Ctrl-C stops)",
        file=sys.stderr,
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()

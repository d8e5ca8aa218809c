"""An HTTP proxy in front of moto's S3 server that answers every PUT of a key ending in `suffix` as S3 answers a
conditional write it refuses, with the status and error code given (409 ConditionalRequestConflict: another
conditional write to the key was under way; 412 PreconditionFailed), and passes every other request to moto as it
came (`refusing_proxy`): what a driver sees of two conditional PUTs racing on S3, which moto never answers so."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from support.http_threads import serving

ERROR = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code><Message>{message}</Message></Error>'


@contextmanager
def refusing_proxy(endpoint: str, suffix: str, status: int, code: str, message: str) -> Iterator[str]:
    """The proxy's endpoint URL while the block runs (module docstring); `endpoint` is moto's."""
    target = urlsplit(endpoint)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # a PUT's `Expect: 100-continue` answered before its body is read

        def relay(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.command == "PUT" and urlsplit(self.path).path.endswith(suffix):
                self.answer(status, {"Content-Type": "application/xml"}, ERROR.format(code=code, message=message))
                return
            upstream = http.client.HTTPConnection(target.hostname, target.port)
            headers = {name: value for name, value in self.headers.items() if name.lower() not in ("host", "expect")}
            upstream.request(self.command, self.path, body=body, headers=headers)
            reply = upstream.getresponse()
            self.answer(reply.status, dict(reply.getheaders()), reply.read())
            upstream.close()

        def answer(self, code: int, headers: dict[str, str], body: str | bytes) -> None:
            data = body.encode() if isinstance(body, str) else body
            self.send_response_only(code)
            for name, value in headers.items():
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = relay

        def log_message(self, format: str, *args: object) -> None:
            pass

    with serving(Handler) as url:
        yield url

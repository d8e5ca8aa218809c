"""A fake of OpenAI's Batch API and Anthropic's Message Batches API on 127.0.0.1, driven by request counts (no
clock): a batch is `in_progress` for its first `polls_to_end` retrieves (and as long as `hold` is set), then ends
as its ending says (`then`: one per batch created, in order; default: completed, every request answered).

OpenAI (base_url http://127.0.0.1:PORT/v1): POST /v1/files (multipart, the JSONL input), DELETE /v1/files/ID (the
file gone from `files`, its id in `deleted`; HTTP 404 for one it does not hold), POST /v1/batches,
GET /v1/batches/ID, POST /v1/batches/ID/cancel, GET /v1/files/ID/content (output and error files), GET /v1/batches
(newest first, `limit` and `after`, each batch with the `metadata` it was created with).
Anthropic (base_url http://127.0.0.1:PORT): POST /v1/messages/batches, GET /v1/messages/batches/ID,
GET /v1/messages/batches/ID/results, POST /v1/messages/batches/ID/cancel, GET /v1/messages/batches (newest first,
`limit` and `after_id`). A batch `forget` drops is unknown from then on (HTTP 404). `on_create` is called with each
batch created before the vendor's answer is sent (a test kills the client there); the first `drop_creates`
creations get no answer at all, their connection closed (the batch created all the same); the first `lose_creates`
(OpenAI) never reach the vendor: their connection closed, no batch created (the input file stays uploaded); the
next `lose_results` fetches of a results file (OpenAI: an output or error file) answer HTTP 404, the batch known.
A batch of more than `max_bytes` (Anthropic: the creation's body; OpenAI: the uploaded input file) is refused with
HTTP 413, as the vendors refuse one past their limits; `received` holds the bytes of each.

An ending: {"status": "completed" | "expired" | "cancelled" | "failed", "answered": N (the first N requests get a
result line; default all), "fates": {position: 500 | 400} (that request's line is an error of that status),
"damage": a function of the result lines' texts (OpenAI: its output file's) to the texts served instead}. An
expired batch lists its unanswered requests in the error file (`batch_expired`) or as `expired` results; a cancelled
one leaves them out (OpenAI) or says `canceled` (Anthropic)."""

from __future__ import annotations

import email.parser
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from test_engine_anthropic import echo as anthropic_echo
from test_engine_openai import chat_payload, completion_payload


class FakeBatchServer:
    def __init__(self, polls_to_end: int = 1) -> None:
        self.polls_to_end = polls_to_end
        self.hold = threading.Event()  # set: every batch stays in progress
        self.endings: list[dict[str, Any]] = []
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []  # batch ids, in the order of their creation
        self.sent: list[dict[str, Any]] = []  # every request line of every batch created
        self.calls: list[tuple[str, str]] = []  # (method, path) of every request
        self.on_poll: Callable[[dict[str, Any]], None] | None = None  # called with the batch at each retrieve
        self.on_create: Callable[[dict[str, Any]], None] | None = None  # called with each batch created
        self.drop_creates = 0
        self.lose_creates = 0
        self.deleted: list[str] = []  # input files deleted (DELETE /v1/files/ID), in order
        self.delete_status = 200  # another: every DELETE /v1/files/ID is refused with it
        self.lose_results = 0  # the next N fetches of a results file answer HTTP 404, the batch itself known
        self.max_bytes: int | None = None  # a batch larger (Anthropic: its body; OpenAI: its file) is refused, 413
        self.received: list[int] = []  # the bytes of each batch's body (Anthropic) or input file (OpenAI) received
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.fake = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def then(self, *endings: dict[str, Any]) -> FakeBatchServer:
        self.endings.extend(endings)
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- the batches ------------------------------------------------------------------------

    def create(
        self, vendor: str, lines: list[dict[str, Any]], endpoint: str = "", metadata: dict[str, str] | None = None
    ) -> dict[str, Any]:
        with self.lock:
            number = len(self.created) + 1
            batch_id = f"batch_{number}" if vendor == "openai" else f"msgbatch_{number}"
            ending = self.endings.pop(0) if self.endings else {"status": "completed"}
            batch = {"id": batch_id, "vendor": vendor, "lines": lines, "endpoint": endpoint, "polls": 0}
            batch.update(ending=ending, status="in_progress", cancelled=False, metadata=metadata, at=int(time.time()))
            self.batches[batch_id] = batch
            self.created.append(batch_id)
            self.sent.extend(lines)
        if self.on_create is not None:
            self.on_create(batch)
        return batch

    def forget(self, batch_id: str) -> None:
        """The vendor no longer knows `batch_id` (deleted, or asked with another organisation's key)."""
        with self.lock:
            self.batches.pop(batch_id, None)

    def listed(self, vendor: str, query: dict[str, list[str]]) -> dict[str, Any]:
        """A page of the vendor's batches, newest first."""
        with self.lock:
            ids = [b for b in reversed(self.created) if b in self.batches and self.batches[b]["vendor"] == vendor]
        after = (query.get("after") or query.get("after_id") or [None])[0]
        if after is not None:
            ids = ids[ids.index(after) + 1 :]
        limit = int(query.get("limit", ["20"])[0])
        show = openai_batch if vendor == "openai" else anthropic_batch
        page = [show(self.batches[b], self.root) for b in ids[:limit]]
        first, last = (page[0]["id"], page[-1]["id"]) if page else (None, None)
        return {"object": "list", "data": page, "first_id": first, "last_id": last, "has_more": len(ids) > limit}

    def advance(self, batch: dict[str, Any]) -> None:
        """One retrieve of `batch`: past `polls_to_end` (and not held), it ends."""
        if self.on_poll is not None:
            self.on_poll(batch)
        with self.lock:
            batch["polls"] += 1
            if batch["status"] != "in_progress" or self.hold.is_set() or batch["polls"] <= self.polls_to_end:
                return
            ending = dict(batch["ending"])
            if batch["cancelled"]:
                ending["status"] = "cancelled"
            batch["status"] = ending["status"]
            batch["results"] = results(batch, ending)


def results(batch: dict[str, Any], ending: dict[str, Any]) -> list[dict[str, Any]]:
    """The result lines of an ended batch (OpenAI: output and error lines together, told apart by `error` and the
    status)."""
    if ending["status"] == "failed":
        return []
    answered = ending.get("answered", len(batch["lines"]))
    fates = ending.get("fates", {})
    out = []
    for position, line in enumerate(batch["lines"]):
        custom = line["custom_id"]
        if position >= answered:
            if ending["status"] == "expired" or batch["vendor"] == "anthropic":
                out.append(unanswered(batch["vendor"], custom, ending["status"]))
            continue
        status = fates.get(position, 200)
        out.append((openai_line if batch["vendor"] == "openai" else anthropic_line)(line, status, batch["endpoint"]))
    return out


def openai_line(line: dict[str, Any], status: int, endpoint: str) -> dict[str, Any]:
    if status == 200:
        body = (chat_payload if endpoint.endswith("/chat/completions") else completion_payload)(line["body"])
    else:
        body = {"error": {"message": f"fake error {status}", "type": "server_error" if status >= 500 else "invalid"}}
    response = {"status_code": status, "request_id": "req_1", "body": body}
    return {"id": "r", "custom_id": line["custom_id"], "response": response, "error": None}


def anthropic_line(line: dict[str, Any], status: int, endpoint: str) -> dict[str, Any]:
    if status == 200:
        result = {"type": "succeeded", "message": anthropic_echo("/v1/messages", line["params"])}
    else:
        kind = "api_error" if status >= 500 else "invalid_request_error"
        result = {"type": "errored", "error": {"type": "error", "error": {"type": kind, "message": f"fake {status}"}}}
    return {"custom_id": line["custom_id"], "result": result}


def served(batch: dict[str, Any], lines: list[dict[str, Any]], damaged: bool = True) -> bytes:
    """The JSONL of result `lines` as served: damaged as the batch's ending says, where `damaged`."""
    texts = [json.dumps(line) for line in lines]
    damage = batch["ending"].get("damage") if damaged else None
    return "".join(text + "\n" for text in (damage(texts) if damage is not None else texts)).encode()


def unanswered(vendor: str, custom: str, status: str) -> dict[str, Any]:
    if vendor == "openai":
        error = {"code": "batch_expired", "message": "This request could not be executed before the completion window"}
        return {"id": "r", "custom_id": custom, "response": None, "error": error}
    return {"custom_id": custom, "result": {"type": "canceled" if status == "cancelled" else "expired"}}


def openai_batch(batch: dict[str, Any], root: str) -> dict[str, Any]:
    lines = batch.get("results", [])
    errors = [line for line in lines if line["error"] or line["response"]["status_code"] != 200]
    out = {
        "id": batch["id"],
        "object": "batch",
        "endpoint": batch["endpoint"],
        "input_file_id": "file-in",
        "completion_window": "24h",
        "status": batch["status"],
        "created_at": batch["at"],
        "metadata": batch["metadata"],
        "request_counts": {
            "total": len(batch["lines"]),
            "completed": len(lines) - len(errors),
            "failed": len(errors),
        },
        "output_file_id": f"file-out-{batch['id']}" if "results" in batch and batch["status"] != "failed" else None,
        "error_file_id": f"file-err-{batch['id']}" if errors else None,
    }
    if batch["status"] == "failed":
        out["errors"] = {"object": "list", "data": [{"code": "invalid_file", "message": "fake: the file is refused"}]}
    return out


def anthropic_batch(batch: dict[str, Any], root: str) -> dict[str, Any]:
    lines = batch.get("results", [])
    kinds = [line["result"]["type"] for line in lines]
    ended = "results" in batch
    return {
        "id": batch["id"],
        "type": "message_batch",
        "processing_status": "ended" if ended else "canceling" if batch["cancelled"] else "in_progress",
        "request_counts": {
            "processing": 0 if ended else len(batch["lines"]),
            "succeeded": kinds.count("succeeded"),
            "errored": kinds.count("errored"),
            "canceled": kinds.count("canceled"),
            "expired": kinds.count("expired"),
        },
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(batch["at"])),
        "expires_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(batch["at"] + 86400)),
        "results_url": f"{root}/v1/messages/batches/{batch['id']}/results" if ended else None,
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def fake(self) -> FakeBatchServer:
        return self.server.fake  # type: ignore[attr-defined,no-any-return]

    def do_GET(self) -> None:
        self.handle_call("GET", b"")

    def do_DELETE(self) -> None:
        self.handle_call("DELETE", b"")

    def do_POST(self) -> None:
        self.handle_call("POST", self.rfile.read(int(self.headers.get("Content-Length", 0))))

    def handle_call(self, method: str, data: bytes) -> None:
        fake, path, query = self.fake, urlsplit(self.path).path, parse_qs(urlsplit(self.path).query)
        with fake.lock:
            fake.calls.append((method, path))
        parts = path.strip("/").split("/")
        if method == "GET" and path == "/v1/models":
            return self.send(200, {"object": "list", "data": []})
        if method == "POST" and path == "/v1/files":
            return self.upload(data)
        if method == "DELETE" and parts[:2] == ["v1", "files"] and len(parts) == 3:
            return self.delete_file(parts[2])
        if method == "POST" and path == "/v1/batches":
            with fake.lock:
                lose, fake.lose_creates = fake.lose_creates > 0, max(0, fake.lose_creates - 1)
            if lose:
                self.close_connection = True  # never reached the vendor: no batch, no answer
                return None
            body = json.loads(data)
            lines = [json.loads(text) for text in fake.files[body["input_file_id"]].decode().splitlines()]
            batch = fake.create("openai", lines, body["endpoint"], body.get("metadata"))
            return self.answer_create(openai_batch(batch, fake.root))
        if method == "GET" and path in ("/v1/batches", "/v1/messages/batches"):
            return self.send(200, fake.listed("openai" if path == "/v1/batches" else "anthropic", query))
        if method == "POST" and path == "/v1/messages/batches":
            if self.too_large(data):
                return self.send(413, {"type": "error", "error": {"type": "request_too_large", "message": "too big"}})
            return self.answer_create(
                anthropic_batch(fake.create("anthropic", json.loads(data)["requests"]), fake.root)
            )
        if parts[:2] == ["v1", "files"] and parts[-1] == "content":
            return self.file_content(parts[2])
        if parts[:2] == ["v1", "batches"] or parts[:3] == ["v1", "messages", "batches"]:
            batch = fake.batches.get(parts[2] if parts[1] == "batches" else parts[3])
            if batch is None:
                return self.send(404, {"error": {"message": "no such batch"}})
            return self.batch_call(method, parts, batch)
        self.send(404, {"error": {"message": f"fake: no {method} {path}"}})

    def batch_call(self, method: str, parts: list[str], batch: dict[str, Any]) -> None:
        fake = self.fake
        show = openai_batch if batch["vendor"] == "openai" else anthropic_batch
        if parts[-1] == "cancel":
            batch["cancelled"] = True
            return self.send(200, show(batch, fake.root))
        if parts[-1] == "results":
            if self.results_lost():
                return self.send(404, {"type": "error", "error": {"type": "not_found_error", "message": "lost"}})
            return self.send(200, served(batch, batch["results"]), "application/binary")
        fake.advance(batch)
        self.send(200, show(batch, fake.root))

    def answer_create(self, batch: dict[str, Any]) -> None:
        with self.fake.lock:
            drop, self.fake.drop_creates = self.fake.drop_creates > 0, max(0, self.fake.drop_creates - 1)
        if drop:
            self.close_connection = True  # the batch is created, its answer lost
            return
        self.send(200, batch)

    def upload(self, data: bytes) -> None:
        head = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
        message = email.parser.BytesParser().parsebytes(head + data)
        content = next(
            part.get_payload(decode=True)
            for part in message.get_payload()
            if part.get_param("name", header="content-disposition") == "file"
        )
        if self.too_large(content):
            return self.send(
                413, {"error": {"message": "fake: the file is too large", "type": "invalid_request_error"}}
            )
        with self.fake.lock:
            file_id = f"file-{len(self.fake.files) + len(self.fake.deleted) + 1}"  # never one deleted
            self.fake.files[file_id] = content
        self.send(200, {"id": file_id, "object": "file", "bytes": len(content), "created_at": 0,
                        "filename": "batch.jsonl", "purpose": "batch", "status": "processed"})  # fmt: skip

    def too_large(self, batch: bytes) -> bool:
        """Record the bytes of a batch received; whether they pass `max_bytes`."""
        with self.fake.lock:
            self.fake.received.append(len(batch))
        return self.fake.max_bytes is not None and len(batch) > self.fake.max_bytes

    def delete_file(self, file_id: str) -> None:
        if self.fake.delete_status != 200:
            return self.send(self.fake.delete_status, {"error": {"message": "fake: not allowed", "type": "denied"}})
        with self.fake.lock:
            held = self.fake.files.pop(file_id, None) is not None
            if held:
                self.fake.deleted.append(file_id)
        if not held:
            return self.send(
                404, {"error": {"message": f"No such File object: {file_id}", "type": "invalid_request_error"}}
            )
        self.send(200, {"id": file_id, "object": "file", "deleted": True})

    def results_lost(self) -> bool:
        """Whether this fetch of a results file is one `lose_results` says the vendor answers with HTTP 404."""
        with self.fake.lock:
            lost, self.fake.lose_results = self.fake.lose_results > 0, max(0, self.fake.lose_results - 1)
        return lost

    def file_content(self, file_id: str) -> None:
        kind, _, batch_id = file_id.removeprefix("file-").partition("-")
        if self.results_lost():
            return self.send(
                404, {"error": {"message": f"No such File object: {file_id}", "type": "invalid_request_error"}}
            )
        lines = self.fake.batches[batch_id].get("results", [])
        errors = [line["error"] is not None or line["response"]["status_code"] != 200 for line in lines]
        chosen = [line for line, error in zip(lines, errors) if error == (kind == "err")]
        self.send(200, served(self.fake.batches[batch_id], chosen, kind == "out"), "application/octet-stream")

    def send(self, status: int, payload: Any, content_type: str = "application/json") -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def fake():
    """A fake batch server for the test, stopped after it."""
    server = FakeBatchServer()
    yield server
    server.hold.clear()
    server.stop()


@pytest.fixture(autouse=True)
def no_ambient_keys(monkeypatch):
    """No key or base URL of the developer's environment reaches the SDKs."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)

"""`--system http --system-arg url=http://127.0.0.1:8000/v1/chat/completions`: the user's own RAG application as an
HTTP service, one POST per example (docs/apps.md).

`preset=openai` (the default) talks to an OpenAI-compatible chat endpoint; `preset=json` to any JSON API, with the
request body declared (`body`, a JSON template) and where the answer, passages and citations are in the reply
(`answer`, `passages`, `citations`, `passage_id` ...: JMESPath; mapping.py). Concurrency is the run's --max-inflight
(one request per example in flight); each request may take `request_timeout` seconds, a retried status (408, 409,
429, 5xx) or a dropped connection is tried again up to `max_retries` times with the hosted engines' full-jitter
backoff, and the whole call - retries, and a reply that streams without end, included - is bounded by `timeout`; a
reply over `max_reply_bytes` is refused. A failure ends the example in one line naming the URL, the status and the
start of the reply.

`headers` (a mapping: `--system-arg 'headers={Authorization: Bearer ${RAG_TOKEN}}'`) are sent with every request,
`${VAR}` taken from the environment when sent: only the header names are recorded (run.json), their values are
never printed or stored, and any reply quoting one has it redacted.

Spans: each request carries a W3C `traceparent` (and `ragbench-otlp-endpoint`, where the run's OTLP/HTTP receiver
takes traces; `ragbench-example-id`, the example's id percent-encoded), so a service instrumented with OpenTelemetry that exports OTLP to that endpoint
(or to `otlp_port`, a fixed port, given to its exporter as OTEL_EXPORTER_OTLP_ENDPOINT when it starts) has its spans
join the example. After the reply the example waits up to `span_wait` seconds for the service's outermost span;
`traces=false` turns the receiver off.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from typing import Any
from urllib.parse import quote

import httpx2

from ragbench.api import ConfigError, SystemRun
from ragbench.api.apps import Application, AppReply, AppReplyError, AppRequest, backoff, retried_status, value_summary

from .mapping import OPENAI_PASSAGES, BodyTemplate, Reading, ReplyPaths, as_paths, openai_body, passage_fields

PRESETS = ("openai", "json")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
SHOWN_BODY = 200  # characters of a failed reply's body its error line quotes
REDACTED = "***"


class HttpAppError(Exception):
    """The service could not be reached, or answered with an error status, after every try: one line."""


class HttpApp(Application):
    name = "http"
    traces = "otlp"

    def __init__(
        self,
        url: str,
        preset: str = "openai",
        model: str = "default",
        body: Any = None,
        answer: str = "",
        passages: str = "",
        citations: str = "",
        passage_id: str = "",
        passage_title: str = "",
        passage_text: str = "",
        passage_score: str = "",
        headers: dict[str, str] | None = None,
        request_timeout: float = 120.0,
        max_retries: int = 2,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        max_reply_bytes: int = 16 * 1024 * 1024,
        traces: bool = True,
        span_wait: float = 10.0,
        otlp_port: int = 0,
        timeout: float = 300.0,
    ) -> None:
        super().__init__(timeout)
        if preset not in PRESETS:
            raise ConfigError(f"system http: preset={preset}: one of {', '.join(PRESETS)}")
        self.url, self.preset, self.model = str(url), preset, str(model)
        if not self.url.startswith(("http://", "https://")):
            raise ConfigError(f"system http: url={self.url}: an http:// or https:// URL")
        if preset == "openai" and self.url.rstrip("/").endswith("/v1"):
            self.url = self.url.rstrip("/") + "/chat/completions"
        self.request_timeout, self.max_retries = float(request_timeout), int(max_retries)
        self.backoff_base, self.backoff_max, self.max_reply_bytes = (
            float(backoff_base),
            float(backoff_max),
            int(max_reply_bytes),
        )
        self.traces = "otlp" if traces else "none"
        self.span_wait, self.otlp_port = float(span_wait), int(otlp_port)
        self._headers = {str(name): str(value) for name, value in (headers or {}).items()}
        self.headers = sorted(self._headers)  # what run.json records: the names, never the values
        for name, value in self._headers.items():
            for variable in _VARIABLE.findall(value):
                if variable not in os.environ:
                    raise ConfigError(f"system http: header {name} takes ${{{variable}}}, which is not set")
        default_answer = "choices[0].message.content" if preset == "openai" else "answer"
        default_passages = OPENAI_PASSAGES if preset == "openai" else ("passages",)
        self.answer, self.passages, self.citations = answer or default_answer, passages, citations
        fields = passage_fields(id=passage_id, title=passage_title, text=passage_text, score=passage_score)
        self._reading = Reading(
            ReplyPaths(self.answer, as_paths(passages, default_passages), citations or None, fields)
        )
        self._body = (
            BodyTemplate(body if body is not None else {"question": "{{ question }}"}) if preset == "json" else None
        )
        self.body = json.dumps(self._body.body) if self._body is not None else None
        self._client: httpx2.AsyncClient | None = None

    async def start(self, run: SystemRun) -> None:
        await super().start(run)
        limits = httpx2.Limits(
            max_connections=max(1, run.max_inflight), max_keepalive_connections=max(1, run.max_inflight)
        )
        self._client = httpx2.AsyncClient(timeout=self.request_timeout, limits=limits, trust_env=False)

    async def stop(self) -> None:
        try:
            if self._client is not None:
                await self._client.aclose()
        finally:
            self._client = None
            await super().stop()

    def _secrets(self) -> list[str]:
        """The values of the environment variables the headers take (what no line or file may show)."""
        names = {name for template in self._headers.values() for name in _VARIABLE.findall(template)}
        return sorted((os.environ[name] for name in names if os.environ.get(name)), key=len, reverse=True)

    def _redacted(self, text: str) -> str:
        for secret in self._secrets():
            text = text.replace(secret, REDACTED)
        return text

    def _request_headers(self, request: AppRequest) -> dict[str, str]:
        sent = {
            name: _VARIABLE.sub(lambda m: os.environ.get(m.group(1), ""), value)
            for name, value in self._headers.items()
        }
        sent["ragbench-example-id"] = quote(request.id, safe="")  # a header holds ASCII: the id percent-encoded
        if request.traceparent is not None:
            sent["traceparent"] = request.traceparent
        if request.otlp_endpoint is not None:
            sent["ragbench-otlp-endpoint"] = request.otlp_endpoint
        return sent

    async def call(self, request: AppRequest) -> AppReply:
        body = openai_body(request, self.model) if self._body is None else self._body.render(request)
        reply = await self._post(body, self._request_headers(request))
        reading = self._reading
        return AppReply(
            answer=reading.answer(reply),
            passages=reading.passages(reply),
            citations=reading.citations(reply),
            raw=self._redacted(value_summary(reply)),
        )

    async def _post(self, body: Any, headers: dict[str, str]) -> Any:
        """The reply's JSON, after as many tries as a retried status or a lost connection allow."""
        client = self._client
        if client is None:
            raise HttpAppError("system http: not started for a run (a run starts it)")
        tries = self.max_retries + 1
        for attempt in range(tries):
            last = attempt == tries - 1
            try:
                status, reason, content = await self._send(client, body, headers)
            except (httpx2.TransportError, httpx2.TimeoutException) as exc:
                if last:
                    what = (
                        "did not answer within" if isinstance(exc, httpx2.TimeoutException) else "could not be reached"
                    )
                    raise HttpAppError(
                        f"http: POST {self.url} {what}"
                        + (f" {self.request_timeout:g} s" if isinstance(exc, httpx2.TimeoutException) else "")
                        + f" after {tries} tries ({type(exc).__name__}: {self._redacted(str(exc)) or 'no detail'})"
                    ) from None
            else:
                if status < 400:
                    return self._json(content)
                if last or not retried_status(status):
                    shown = self._redacted(content[:SHOWN_BODY].decode("utf-8", "replace"))
                    raise HttpAppError(
                        f"http: POST {self.url} answered {status} {reason} after {attempt + 1} tr{'y' if attempt == 0 else 'ies'}: {shown!r}"
                    )
            await asyncio.sleep(backoff(attempt, self.backoff_base, self.backoff_max))
        raise AssertionError("unreachable: the last try returns or raises")

    async def _send(self, client: httpx2.AsyncClient, body: Any, headers: dict[str, str]) -> tuple[int, str, bytes]:
        """One POST: its status, reason and body, read up to `max_reply_bytes` (more is refused)."""
        async with client.stream("POST", self.url, json=body, headers=headers) as response:
            chunks, size = [], 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > self.max_reply_bytes:
                    raise AppReplyError(
                        f"http: POST {self.url} answered more than max_reply_bytes={self.max_reply_bytes:,} bytes"
                    )
                chunks.append(chunk)
            return response.status_code, response.reason_phrase, b"".join(chunks)

    def _json(self, content: bytes) -> Any:
        try:
            return json.loads(content)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            shown = self._redacted(content[:SHOWN_BODY].decode("utf-8", "replace"))
            raise AppReplyError(f"http: POST {self.url} answered what is not JSON ({exc}): {shown!r}") from None

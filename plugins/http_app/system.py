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

Usage: the model and tokens the reply reports (`usage` and `usage_model`, JMESPath: by default the OpenAI preset's
`usage` and `model`, none for `json`; `usage=false`: not read) become `AppReply.usage`, which the run prices as one
model call of that model where the example's spans carry no model call's tokens (ragbench._apps.reply_usage; the
model the reply does not name: the `model` option's); a usage that cannot be priced right fails the example in one
line naming the URL. A stream's usage: OpenAI's usage chunk (in the assembled completion), a JSON stream's the last
event `usage` finds one in.

`stream=true`: the reply as Server-Sent Events, read as they come (streaming.py: OpenAI's chunks assembled as the
SDK does, or a JSON stream by `answer_delta`, `final` and `end`); how it arrived (the first token's time, the chunks,
the usage chunk) is the reply's `stream`. A stream cut before its end is tried again as a lost connection is; one
the run's `timeout` cuts says how far it got (`timed_out`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import httpx2

from ragbench.api import ConfigError, SystemRun
from ragbench.api.apps import (
    Application,
    AppReply,
    AppReplyError,
    AppRequest,
    ReplyUsage,
    Streamed,
    backoff,
    reply_usage,
    retried_status,
    value_summary,
)

from .mapping import (
    OPENAI_PASSAGES,
    BodyTemplate,
    Reading,
    ReplyPaths,
    as_paths,
    compiled,
    openai_body,
    passage_fields,
)
from .streaming import JsonEvents, OpenAIChunks, ReplyProgress, StreamCut, StreamError, needs_sdk, read_stream

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
        stream: bool = False,
        answer_delta: str = "",
        final: str = "",
        end: str = "",
        usage: str | bool = "",
        usage_model: str = "",
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
        self.stream, self.answer_delta, self.final, self.end = bool(stream), answer_delta, final, end
        if self.stream:
            needs_sdk()
        if (answer_delta or final or end) and not (self.stream and preset == "json"):
            raise ConfigError(
                "system http: answer_delta, final and end read a stream of JSON events: preset=json stream=true"
            )
        if usage is False:
            self.usage, self.usage_model = "", ""
        else:
            self.usage = str(usage or ("usage" if preset == "openai" else ""))
            self.usage_model = usage_model or ("model" if preset == "openai" else "")
        if self.usage_model and not self.usage:
            raise ConfigError(
                "system http: usage_model names the model of a usage: name the usage too (usage=JMESPATH)"
            )
        self._usage = compiled(self.usage, "usage") if self.usage else None
        self._usage_model = compiled(self.usage_model, "usage_model") if self.usage_model else None
        self._answer_delta = compiled(answer_delta, "answer_delta") if answer_delta else None
        self._final = compiled(final, "final") if final else None
        self._end = compiled(end, "end") if end else None
        self._progress: dict[tuple[str, str], ReplyProgress] = {}  # by (task, example id): how far its reply got
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
        self._progress.clear()
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

    def timed_out(self, request: AppRequest) -> str:
        progress = self._progress.pop((request.task, request.id), None)
        where = f"http: POST {self.url} did not finish within timeout={self.timeout:g} s"
        if progress is None or progress.reader is None:
            return where
        return f"{where}: {progress.told()} streamed, no {progress.reader.end}"

    async def call(self, request: AppRequest) -> AppReply:
        body = openai_body(request, self.model, self.stream) if self._body is None else self._body.render(request)
        headers = self._request_headers(request)
        if self.stream:
            headers["Accept"] = "text/event-stream"
        key = (request.task, request.id)
        try:
            whole = await self._post(body, headers, key)
        except asyncio.CancelledError:  # kept: the run's timeout asks `timed_out` how far the reply got
            raise
        except BaseException:
            self._progress.pop(key, None)
            raise
        progress = self._progress.pop(key)
        reader = progress.reader
        if reader is None:
            return self._reply(whole)
        try:
            whole = reader.reply()
        except StreamError as exc:
            raise AppReplyError(f"http: POST {self.url} {exc}") from None
        if isinstance(reader, JsonEvents):  # the answer and usage from the events, the rest from the final one
            reported = self._reported_usage(reader.usage_found, reader.model_found)
            return self._reply(whole, reader.answer(), progress.streamed(reader.usage), reported)
        return self._reply(whole, None, progress.streamed(reader.usage))

    def _reply(
        self, whole: Any, answer: str | None = None, streamed: Streamed | None = None, usage: Any = None
    ) -> AppReply:
        reading = self._reading
        if usage is None and self._usage is not None:
            usage = self._reported_usage(
                self._usage.search(whole), self._usage_model and self._usage_model.search(whole)
            )
        return AppReply(
            answer=reading.answer(whole) if answer is None else answer,
            passages=reading.passages(whole),
            citations=reading.citations(whole),
            raw=self._redacted(value_summary(whole)),
            stream=streamed,
            usage=usage or None,
        )

    def _reported_usage(self, usage: Any, model: Any) -> ReplyUsage | None:
        """The usage the reply reports, of the model it names (else the `model` option's); one line if it cannot be
        priced right."""
        named = model if isinstance(model, str) and model.strip() else self.model
        try:
            return reply_usage(usage, named.strip(), f"the reply's usage at {self.usage!r}")
        except ValueError as exc:
            raise AppReplyError(f"http: POST {self.url}: {self._redacted(str(exc))}") from None

    def _reader(self) -> OpenAIChunks | JsonEvents:
        if self._body is None:
            return OpenAIChunks()
        return JsonEvents(self._answer_delta, self._final, self._end, self.end, self._usage, self._usage_model)

    async def _post(self, body: Any, headers: dict[str, str], key: tuple[str, str]) -> Any:
        """The reply's JSON (a stream's: None, its reader in `_progress`), after as many tries as a retried status,
        a lost connection or a cut stream allow."""
        client = self._client
        if client is None:
            raise HttpAppError("system http: not started for a run (a run starts it)")
        tries = self.max_retries + 1
        for attempt in range(tries):
            last = attempt == tries - 1
            progress = ReplyProgress(reader=self._reader() if self.stream else None)
            self._progress[key] = progress
            try:
                status, reason, content = await self._send(client, body, headers, progress)
            except StreamCut as exc:
                if last:
                    tried = f" (the last of {tries} tries)" if tries > 1 else ""
                    raise HttpAppError(f"http: POST {self.url} {self._redacted(str(exc))}{tried}") from None
            except StreamError as exc:
                raise AppReplyError(f"http: POST {self.url} {self._redacted(str(exc))}") from None
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
                    return None if self.stream else self._json(content)
                if last or not retried_status(status):
                    shown = self._redacted(content[:SHOWN_BODY].decode("utf-8", "replace"))
                    raise HttpAppError(
                        f"http: POST {self.url} answered {status} {reason} after {attempt + 1} tr{'y' if attempt == 0 else 'ies'}: {shown!r}"
                    )
            await asyncio.sleep(backoff(attempt, self.backoff_base, self.backoff_max))
        raise AssertionError("unreachable: the last try returns or raises")

    async def _send(
        self, client: httpx2.AsyncClient, body: Any, headers: dict[str, str], progress: ReplyProgress
    ) -> tuple[int, str, bytes]:
        """One POST: its status, reason and body, read up to `max_reply_bytes` (more is refused); a stream's body
        read into `progress.reader` (its content returned empty)."""
        async with client.stream("POST", self.url, json=body, headers=headers) as response:
            reader = progress.reader
            kind = response.headers.get("content-type", "").partition(";")[0].strip()
            if reader is None or response.status_code >= 400 or kind != "text/event-stream":
                content = b"".join([chunk async for chunk in self._bounded(response, progress)])
                if reader is not None and response.status_code < 400:
                    shown = self._redacted(content[:SHOWN_BODY].decode("utf-8", "replace"))
                    raise AppReplyError(
                        f"http: POST {self.url} answered {kind or 'no Content-Type'}, not text/event-stream, "
                        f"with stream=true: {shown!r}"
                    )
                return response.status_code, response.reason_phrase, content
            try:
                await read_stream(self._bounded(response, progress), reader, progress)
            except (httpx2.TransportError, httpx2.TimeoutException) as exc:
                detail = self._redacted(str(exc)) or "no detail"
                raise StreamCut(
                    f"cut its stream before {reader.end} after {progress.told()} ({type(exc).__name__}: {detail})"
                ) from None
            return response.status_code, response.reason_phrase, b""

    async def _bounded(self, response: httpx2.Response, progress: ReplyProgress) -> AsyncIterator[bytes]:
        """The reply's bytes, refused past `max_reply_bytes`."""
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self.max_reply_bytes:
                streamed = f" ({progress.told()} streamed)" if progress.reader is not None else ""
                raise AppReplyError(
                    f"http: POST {self.url} answered more than max_reply_bytes={self.max_reply_bytes:,} bytes"
                    + streamed
                )
            yield chunk

    def _json(self, content: bytes) -> Any:
        try:
            return json.loads(content)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            shown = self._redacted(content[:SHOWN_BODY].decode("utf-8", "replace"))
            raise AppReplyError(f"http: POST {self.url} answered what is not JSON ({exc}): {shown!r}") from None

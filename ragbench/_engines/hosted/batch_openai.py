"""OpenAI's Batch API for the `openai` engine with `batch=true` (the loop: batches/runner.py): the requests as a
JSONL file uploaded (`POST /files`, purpose "batch"), a batch of it created (`POST /batches`, a 24 h window) and polled
(`GET /batches/ID`), then its output and error files read (`GET /files/ID/content`). The input file's id is recorded
as soon as it is uploaded: where no batch is found for an intent (its creation never reached the vendor), the file is
deleted (`DELETE /files/ID`). The batch carries its intent
in its `metadata` (`ragbench_intent`, batches/store.py): an intent left without an id is matched among the batches
created since it (`GET /batches`, newest first). A batch holds at most 50,000 requests and 200 MB of input file
(`LIMITS`): the loop cuts larger ones (batches/cuts.py).

Each input line is `{"custom_id", "method": "POST", "url", "body"}`, the body the one the engine would send
(chat completions, completions or the Responses API, --model-arg fields included); each output line's
`response.body` is read as the engine reads an answer. A line whose status is 5xx or 429, or an error line
(`batch_expired`, `batch_cancelled`, ...), is the vendor's failure: sent again; another 4xx is the request's
fault (a RequestError, as the engine's own)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, Protocol

import openai
from openai.types import Completion
from openai.types.chat import ChatCompletion
from openai.types.responses import Response as ResponsesAnswer

from ..._values.billed import TokenCounts
from ..._values.engine_errors import EngineError
from ..._values.json_values import JsonObject
from ..._values.llm_request import Request
from ..._values.llm_responses import Response
from ..batches.interface import BatchLimits, Outcome, Polled, Resend, ResultsMissing, SdkBatchingEngine
from ..batches.results import text_lines
from ..batches.store import CLOCK_SKEW_S, Submitted
from ..retries import retried_status
from .openai_client import no_auth_header
from .openai_responses import parse_completion
from .openai_responses_api import parse_response
from .usage_counts import OPENAI, OPENAI_RESPONSES, read_usage, usage_tokens

ENDED = ("completed", "failed", "expired", "cancelled")
MB = 1_000_000  # the vendor's "MB" read as the smaller unit: a limit never passed either way


def jsonl(line: JsonObject) -> str:
    """One input line as the uploaded JSONL file holds it (ASCII: one byte a character)."""
    return json.dumps(line) + "\n"


# platform.openai.com/docs/api-reference/batch/create: the input file "can contain up to 50,000 requests, and can be
# up to 200 MB in size"
LIMITS = BatchLimits(
    requests=50_000,
    bytes=200 * MB,
    size=lambda line: len(jsonl(line)),
    docs="OpenAI's Batch API: 50,000 requests and 200 MB an input file",
)
ENDPOINTS = {"responses": "/v1/responses", "chat": "/v1/chat/completions", "prompt": "/v1/completions"}


def vendor_failed(status: int) -> bool:
    """Whether a request's HTTP status in a batch's results says the vendor failed it (5xx, 429, 408, 409):
    sent again; any other says the request (RequestError) or the endpoint's set-up is at fault."""
    return retried_status(status)


class OpenAIEngineLike(SdkBatchingEngine, Protocol):
    """What is read of the `openai` engine (which imports this module): its API, mode and request bodies."""

    @property
    def api(self) -> str: ...

    @property
    def mode(self) -> str: ...

    def call_arguments(self, request: Request) -> tuple[bool, dict[str, Any]]: ...


class OpenAIBatches:
    limits = LIMITS

    def __init__(self, engine: OpenAIEngineLike) -> None:
        self.engine = engine

    @property
    def _headers(self) -> Any:
        return None if os.environ.get(self.engine.api_key_env) else no_auth_header

    def line(self, request: Request, custom: str) -> tuple[str, JsonObject]:
        chat, args = self.engine.call_arguments(request)
        body = {key: value for key, value in args.items() if key not in ("extra_body", "extra_headers")}
        body.update(args.get("extra_body", {}))
        api = "responses" if self.engine.api == "responses" else "chat" if chat else "prompt"
        url = ENDPOINTS[api]
        return url, {"custom_id": custom, "method": "POST", "url": url, "body": body}

    async def create(
        self,
        client: openai.AsyncOpenAI,
        endpoint: str,
        lines: list[JsonObject],
        intent: str,
        upload: Callable[[str], None],
    ) -> str:
        client = client.with_options(max_retries=0)  # tried once: the loop resolves a try that failed (BatchVendor)
        data = "".join(jsonl(line) for line in lines).encode()
        uploaded = await client.files.create(
            file=(f"ragbench-{intent}.jsonl", data, "application/jsonl"), purpose="batch", extra_headers=self._headers
        )
        upload(uploaded.id)
        batch = await client.batches.create(
            input_file_id=uploaded.id,
            endpoint=endpoint,  # type: ignore[arg-type]  # one of ENDPOINTS
            completion_window="24h",
            metadata={"made_by": "ragbench", "ragbench_intent": intent},
            extra_headers=self._headers,
        )
        return str(batch.id)

    async def candidates(
        self, client: openai.AsyncOpenAI, intent: Submitted, known: set[str]
    ) -> list[tuple[str, bool]]:
        since = intent.at / 1e9 - CLOCK_SKEW_S
        async for batch in client.batches.list(limit=100, extra_headers=self._headers):
            if batch.created_at < since:
                break
            if batch.id not in known and (batch.metadata or {}).get("ragbench_intent") == intent.intent:
                return [(batch.id, True)]
        return []

    async def discard(self, client: openai.AsyncOpenAI, file_id: str) -> bool:
        """Delete input file `file_id` (`DELETE /files/ID`): False where the vendor no longer holds it (HTTP 404)."""
        try:
            await client.files.delete(file_id, extra_headers=self._headers)
        except openai.NotFoundError:
            return False
        return True

    async def poll(self, client: openai.AsyncOpenAI, batch_id: str) -> Polled:
        batch = await client.batches.retrieve(batch_id, extra_headers=self._headers)
        counts = batch.request_counts
        done = (counts.completed + counts.failed) if counts is not None else 0
        total = counts.total if counts is not None else 0
        failed = None
        if batch.status == "failed":
            errors = batch.errors.data if batch.errors is not None and batch.errors.data else []
            failed = "; ".join(f"{error.code}: {error.message}" for error in errors[:3]) or "no reason given"
        return Polled(batch.status, done, total, batch.status in ENDED, failed)

    async def results(self, client: openai.AsyncOpenAI, batch_id: str) -> list[str]:
        batch = await client.batches.retrieve(batch_id, extra_headers=self._headers)
        lines: list[str] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                try:
                    answer = await client.files.content(file_id, extra_headers=self._headers)
                except openai.NotFoundError as exc:
                    raise ResultsMissing(f"its results file {file_id} is not found (HTTP 404: {exc.message})") from None
                lines += text_lines(answer.content)
        return lines

    def outcome(self, line: dict[str, Any], request: Request) -> Outcome:
        response, error = line["response"], line.get("error")
        if error:  # batch_expired, batch_cancelled: never sent, or not answered in time
            return Resend(f"{error.get('code')}: {error.get('message')}")
        status, body = int(response["status_code"]), response["body"]
        if status != 200:
            message = body.get("error", {}).get("message", body) if isinstance(body, dict) else body
            if vendor_failed(status):
                return Resend(f"HTTP {status}: {self.engine.excerpt(str(message))}")
            return self.engine.status_failure(status, str(message), 1, self.engine.status_hint(request, str(message)))
        return self._parse(body, request)

    def billed(self, line: dict[str, Any]) -> TokenCounts:
        """The tokens a result line's answer was billed for (read as `outcome` reads them; ValueError and the rest:
        none readable)."""
        counts = OPENAI_RESPONSES if self.engine.api == "responses" else OPENAI
        return usage_tokens(line["response"]["body"].get("usage"), counts)

    def _parse(self, body: dict[str, Any], request: Request) -> Response | EngineError:
        engine = self.engine
        if engine.api == "responses":
            read_usage(body.get("usage"), OPENAI_RESPONSES)
            return parse_response(ResponsesAnswer.construct(**body), bool(request.tools))
        read_usage(body.get("usage"), OPENAI)
        chat = request.is_chat or engine.mode == "chat"
        answer = (ChatCompletion if chat else Completion).construct(**body)
        return parse_completion(answer, request.sampling, chat, bool(request.tools))

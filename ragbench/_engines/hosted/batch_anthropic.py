"""Anthropic's Message Batches API for the `anthropic` engine with `batch=true` (the loop: batches/runner.py): the
requests sent as one batch (`POST /v1/messages/batches`, `{"requests": [{"custom_id", "params"}]}`), polled
(`GET /v1/messages/batches/ID`) until its `processing_status` is "ended", then its results read (the JSONL of its
`results_url`). A batch carries no tag of ours: an intent left without an id (batches/store.py) is matched among
the batches created since it (`GET /v1/messages/batches`, newest first) of as many requests, by their results.

Each request's `params` are the body the engine would send (--model-arg fields included); a remote MCP server is
not sent in a batch (the MCP connector is a beta the batch endpoint is not asked for): that request fails with why.
A result `succeeded` is read as the engine reads a message; `expired` and `canceled`, and `errored` with an error
of Anthropic's side (api_error, overloaded_error, rate_limit_error, timeout_error), are sent again; another
`errored` fails: invalid_request_error as the request's fault (a RequestError). A batch holds at most 100,000
requests and 256 MB of body as the SDK writes it (`LIMITS`): the loop cuts larger ones (batches/cuts.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from ..._values.billed import TokenCounts
from ..._values.engine_errors import EngineError, RequestError
from ..._values.json_values import JsonObject
from ..._values.llm_request import Request
from ..batches.interface import BatchLimits, Outcome, Polled, Resend, ResultsMissing, SdkBatchingEngine
from ..batches.results import text_lines
from ..batches.store import CLOCK_SKEW_S, Submitted
from .anthropic_messages import message_arguments, parse_message
from .usage_counts import ANTHROPIC, read_usage, usage_tokens

VENDOR_ERRORS = ("api_error", "overloaded_error", "rate_limit_error", "timeout_error")
ENDPOINT = "/v1/messages"
MB = 1_000_000  # the vendor's "MB" read as the smaller unit: a limit never passed either way
FRAMING = len('{"requests":[]}')  # the body `create` sends, less its lines


def sent_json(line: JsonObject) -> str:
    """A line as the SDK writes it into the body (compact, UTF-8: its `openapi_dumps`)."""
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# platform.claude.com/docs/en/build-with-claude/batch-processing: "A Message Batch is limited to either 100,000
# Message requests or 256 MB in size, whichever is reached first"
LIMITS = BatchLimits(
    requests=100_000,
    bytes=256 * MB,
    size=lambda line: len(sent_json(line).encode()),
    docs="Anthropic's Message Batches: 100,000 requests and 256 MB a batch",
    separator=len(","),
    framing=FRAMING,
)


class AnthropicBatches:
    limits = LIMITS

    def __init__(self, engine: SdkBatchingEngine, prompt_cache: str | None = None) -> None:
        self.engine, self.prompt_cache = engine, prompt_cache

    @property
    def _headers(self) -> Any:
        if os.environ.get(self.engine.api_key_env):
            return None
        omit = self.engine.sdk.omit
        return {"X-Api-Key": omit, "Authorization": omit}

    def line(self, request: Request, custom: str) -> tuple[str, JsonObject]:
        params = message_arguments(request, self.engine.model, self.prompt_cache)
        if "mcp_servers" in params:
            raise RequestError("anthropic engine: a remote MCP server is not sent in a batch (batch=true)")
        return ENDPOINT, {"custom_id": custom, "params": {**params, **self.engine.extra_body}}

    async def create(
        self, client: Any, endpoint: str, lines: list[JsonObject], intent: str, upload: Callable[[str], None]
    ) -> str:
        # no file is uploaded (`upload` is not called); sent as given (the SDK would walk every request against its types),
        # tried once: the loop resolves a try that failed (BatchVendor.create)
        batch = await client.with_options(max_retries=0).messages.batches.create(
            requests=[], extra_body={"requests": lines}, extra_headers=self._headers
        )
        return str(batch.id)

    async def candidates(self, client: Any, intent: Submitted, known: set[str]) -> list[tuple[str, bool]]:
        since, out = intent.at / 1e9 - CLOCK_SKEW_S, []
        async for batch in client.messages.batches.list(limit=100, extra_headers=self._headers):
            if batch.created_at.timestamp() < since:
                break
            counts = batch.request_counts
            total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
            if batch.id not in known and total == len(intent.custom_ids):
                out.append((str(batch.id), False))
        return out

    async def discard(self, client: Any, file_id: str) -> bool:
        return False  # Message Batches upload no file: none is ever recorded to delete

    async def poll(self, client: Any, batch_id: str) -> Polled:
        batch = await client.messages.batches.retrieve(batch_id, extra_headers=self._headers)
        counts = batch.request_counts
        done = counts.succeeded + counts.errored + counts.canceled + counts.expired
        return Polled(batch.processing_status, done, done + counts.processing, batch.processing_status == "ended")

    async def results(self, client: Any, batch_id: str) -> list[str]:
        try:
            raw = await client.messages.batches.with_raw_response.results(batch_id, extra_headers=self._headers)
        except self.engine.sdk.NotFoundError as exc:
            if not str(exc.response.request.url.path).endswith("/results"):
                raise  # the batch itself is unknown (its retrieve answered 404)
            raise ResultsMissing(f"its results file is not found (HTTP 404: {exc.message})") from None
        return text_lines(await raw.http_response.aread())

    def billed(self, line: dict[str, Any]) -> TokenCounts:
        """The tokens a result line's answer was billed for (read as `outcome` reads them; ValueError and the rest:
        none readable)."""
        return usage_tokens(line["result"]["message"].get("usage"), ANTHROPIC)

    def outcome(self, line: dict[str, Any], request: Request) -> Outcome:
        result = line["result"]
        kind = result["type"]
        if kind == "succeeded":
            message = result["message"]
            read_usage(message.get("usage"), ANTHROPIC)
            return parse_message(self.engine.sdk.types.Message.construct(**message), request)
        if kind != "errored":  # expired, canceled
            return Resend(f"the batch's request was {kind}")
        error = result.get("error") or {}
        error = error.get("error", error) if isinstance(error, dict) else {}
        what = f"{error.get('type')}: {self.engine.excerpt(str(error.get('message')))}"
        if error.get("type") in VENDOR_ERRORS:
            return Resend(what)
        return self.engine.failure(
            what, 1, RequestError if error.get("type") == "invalid_request_error" else EngineError
        )

"""`openai` engine: any OpenAI-compatible HTTP server (OpenAI, `vllm serve`, llama.cpp server, TGI).

Model strings: `openai:gpt-4o-mini`, `openai:meta-llama/Llama-3.1-8B-Instruct` (with --base-url).
The base URL comes from the `base_url` option (--base-url), else $OPENAI_BASE_URL, else
https://api.openai.com/v1; it must include the API prefix (`http://localhost:8000/v1` for vllm).

Chat requests go to {base}/chat/completions and prompt requests to {base}/completions
(mode="auto"); mode="chat" sends a prompt request to the chat endpoint as one user message, for
servers or models that only serve chat. Sampling maps onto the request body as max_tokens,
temperature, top_p, n, stop (a list, omitted when empty), seed (when set), logprobs (chat:
`logprobs: true, top_logprobs: k`; completions: `logprobs: k`), and skip_special_tokens (a vllm
extension, sent only when False). `Sampling.logprob_tokens` (named tokens such as Self-RAG's
"[Relevant]"): the API has no per-token query, so the request asks for the top NAMED_TOP_LOGPROBS (20,
OpenAI's maximum; a vllm server allows up to its --max-logprobs) and each position's `named` holds
the named tokens found among them (a token outside the top 20 is absent, as one outside vLLM's top-k
dict is for upstream Self-RAG); `token_id` stays None (the API returns strings), and
`cumulative_logprob` is the sum of the chosen tokens' log-probabilities. `Sampling.lora` is sent as the `model` name: that is how
`vllm serve --enable-lora --lora-modules NAME=PATH` exposes an adapter, so pass lora=NAME.
Any other --model-arg is sent verbatim as an extra field of every request body (e.g.
`repetition_penalty=1.1` for vllm) and is part of the engine id, hence of the cache key.

The API key is read from the environment variable named by `api_key_env` (default
OPENAI_API_KEY; it may be unset for local servers) when the HTTP client is created, and lives only
in that client's Authorization header: it is never an attribute, never part of engine_id or repr,
and is redacted from every error message and log line.

Failures: HTTP 429, any 5xx, timeouts, dropped connections and 2xx bodies that are not a completion
(not JSON, cut short, no choices: a proxy's error page) are retried up to `max_retries`
times with full-jitter exponential backoff (uniform(0, min(backoff_max, backoff_base * 2**attempt)));
a Retry-After header (seconds or HTTP date) on 429/503 replaces the computed delay, capped at
backoff_max. Other 4xx fail at once. The final failure is a one-line `EngineError`.

`timeout` bounds each attempt as a whole (connect, send, wait, read). At most `concurrency`
requests are on the wire at once (the scheduler's cap, `max_concurrency`, and the engine's own).
The HTTP client is created lazily inside the running event loop; call `await engine.aclose()`
from that loop (or `close()` after it) to release its connections.
"""
from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import random
import re
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from ..errors import ConfigError
from .base import Engine, EngineError, Request, Response, TokenLogprobs

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MODES = ("auto", "chat")
# Body fields the engine sets itself from the request; an extra option may not override them.
_RESERVED = {"model", "messages", "prompt", "max_tokens", "temperature", "top_p", "n", "stop", "seed",
             "logprobs", "top_logprobs", "stream", "skip_special_tokens", "response_format"}
_SECRET_NAME = re.compile(r"(?:^|_)(?:key|apikey|secret|password|passwd|auth|authorization|token)$", re.I)
_KEY_LIKE = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{4,}")


def _public_url(url: str) -> str:
    """The URL without user info, query or fragment: safe to show and to key a cache on."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Parse a Retry-After header: delta-seconds or an HTTP date. None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


NAMED_TOP_LOGPROBS = 20


def _top_k(sampling: Any) -> int | None:
    """How many top log-probs to ask for: the request's k, or enough to find named tokens."""
    if not sampling.logprob_tokens:
        return sampling.logprobs
    return max(sampling.logprobs or 0, NAMED_TOP_LOGPROBS)


def _keep_asked(positions: list[TokenLogprobs], sampling: Any) -> list[TokenLogprobs]:
    """Named tokens from each position's top list; the top list itself only if top-k was asked."""
    for position in positions:
        position.named = {t: position.top[t] for t in sampling.logprob_tokens if t in position.top}
        position.top = dict(list(position.top.items())[:sampling.logprobs]) if sampling.logprobs else {}
    return positions


def _chat_logprobs(data: Any) -> list[TokenLogprobs] | None:
    # {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}]}]}
    if not isinstance(data, dict) or data.get("content") is None:
        return None
    return [TokenLogprobs(token=item["token"], logprob=float(item["logprob"]),
                          top={t["token"]: float(t["logprob"]) for t in item.get("top_logprobs") or ()})
            for item in data["content"]]


def _completion_logprobs(data: Any) -> list[TokenLogprobs] | None:
    # {"tokens": [...], "token_logprobs": [...], "top_logprobs": [{token: logprob}, ...], "text_offset": [...]}
    if not isinstance(data, dict) or data.get("tokens") is None:
        return None
    tokens, values = data["tokens"], data.get("token_logprobs") or []
    tops = data.get("top_logprobs") or []
    out = []
    for i, token in enumerate(tokens):
        value = values[i] if i < len(values) else None
        top = tops[i] if i < len(tops) and tops[i] else {}
        # None only for an echoed first prompt token, which this engine never asks for
        out.append(TokenLogprobs(token=token, logprob=float("nan") if value is None else float(value),
                                 top={t: float(v) for t, v in top.items()}))
    return out


class _Unreadable(ValueError):
    """An HTTP 2xx whose body is not a completion (not JSON, cut short, no choices)."""


class OpenAIEngine(Engine):
    kind = "openai"
    concurrent = True

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 concurrency: int = 16, timeout: float = 60, max_retries: int = 6,
                 backoff_base: float = 1.0, backoff_max: float = 60, mode: str = "auto",
                 **options: Any) -> None:
        if any(_SECRET_NAME.search(name) for name in options):
            raise ConfigError("openai engine: secrets are not accepted as --model-arg; put the key in an "
                              f"environment variable and name it with api_key_env (default {api_key_env})")
        reserved = sorted(set(options) & _RESERVED)
        if reserved:
            raise ConfigError(f"openai engine: {', '.join(reserved)} cannot be a --model-arg; "
                              "it comes from the request's sampling parameters")
        if mode not in MODES:
            raise ConfigError(f"openai engine: mode must be one of {', '.join(MODES)}, not {mode!r}")
        super().__init__(model, **options)
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.api_key_env = api_key_env
        self.max_concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.mode = mode
        self.extra_body = dict(options)  # --model-arg values arrive already parsed (YAML scalars)
        self._http: httpx.AsyncClient | None = None
        self._http_loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None
        self._closing: asyncio.Task | None = None

    @classmethod
    def preflight(cls, model: str, options: dict[str, Any]) -> list[str]:
        """A given server (--base-url, or $OPENAI_BASE_URL) answers within a few seconds; OpenAI's own
        API (no server given) has its key in the environment."""
        from ..preflight import unreachable

        url = options.get("base_url") or os.environ.get("OPENAI_BASE_URL")
        key_env = str(options.get("api_key_env", "OPENAI_API_KEY"))
        why = unreachable(str(url).rstrip("/") + "/models") if url else None
        problems = [*super().preflight(model, options),
                    *([f"{why}; start the server or correct --base-url"] if why else [])]
        if not url and not os.environ.get(key_env):
            problems.append(f"{DEFAULT_BASE_URL} needs an API key: set ${key_env} (or name another variable with "
                            "--model-arg api_key_env=NAME), or give --base-url of an OpenAI-compatible server")
        return problems

    @property
    def engine_id(self) -> str:
        out = f"{self.kind}:{self.model}"
        public = _public_url(self.base_url)
        if public != DEFAULT_BASE_URL:
            out += f"@{public}"
        if self.mode != "auto":
            out += f";mode={self.mode}"
        for name in sorted(self.extra_body):
            out += f";{name}={json.dumps(self.extra_body[name], sort_keys=True)}"
        return out

    def __repr__(self) -> str:
        return (f"OpenAIEngine(model={self.model!r}, base_url={_public_url(self.base_url)!r}, mode={self.mode!r}, "
                f"concurrency={self.max_concurrency}, api_key_env={self.api_key_env!r})")

    # -- the HTTP client, one per event loop ------------------------------------------------

    def _client(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._http is None or self._http_loop is not loop or self._slots is None:
            # A new loop means a new run; the old client's connections belong to the old loop.
            headers = {"Content-Type": "application/json"}
            key = os.environ.get(self.api_key_env)
            if key:
                headers["Authorization"] = f"Bearer {key}"
            self._http = httpx.AsyncClient(
                headers=headers, timeout=httpx.Timeout(self.timeout),
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=self.max_concurrency))
            self._http_loop = loop
            self._slots = asyncio.Semaphore(self.max_concurrency)
        return self._http, self._slots

    async def aclose(self) -> None:
        client, loop = self._http, self._http_loop
        self._http = self._http_loop = self._slots = None
        if client is not None and loop is asyncio.get_running_loop():
            await client.aclose()

    def close(self) -> None:
        client, loop = self._http, self._http_loop
        if client is None or loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._closing = loop.create_task(self.aclose())
            return
        self._http = self._http_loop = self._slots = None
        if running is None and not loop.is_closed():
            loop.run_until_complete(client.aclose())
        # otherwise the owning loop is gone and its sockets with it: nothing left to await

    # -- requests -------------------------------------------------------------------------

    def _body(self, request: Request) -> tuple[str, dict[str, Any], bool]:
        sampling = request.sampling
        chat = request.is_chat or self.mode == "chat"
        body: dict[str, Any] = dict(self.extra_body)
        body["model"] = sampling.lora or self.model
        if chat:
            body["messages"] = (request.message_dicts() if request.is_chat
                                else [{"role": "user", "content": request.prompt}])
        else:
            body["prompt"] = request.prompt
        body.update(max_tokens=sampling.max_tokens, temperature=sampling.temperature,
                    top_p=sampling.top_p, n=sampling.n)
        if sampling.stop:
            body["stop"] = list(sampling.stop)
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        top_k = _top_k(sampling)
        if top_k is not None:
            if chat:
                body.update(logprobs=True, top_logprobs=top_k)
            else:
                body["logprobs"] = top_k
        if not sampling.skip_special_tokens:
            body["skip_special_tokens"] = False
        if sampling.json_mode and chat:
            body["response_format"] = {"type": "json_object"}
        return ("/chat/completions" if chat else "/completions"), body, chat

    def _redact(self, text: str) -> str:
        key = os.environ.get(self.api_key_env)
        if key:
            text = text.replace(key, "***")
        return _KEY_LIKE.sub("sk-***", text)

    def _excerpt(self, response: httpx.Response) -> str:
        text = response.text
        try:
            error = json.loads(text).get("error")
            text = error.get("message", text) if isinstance(error, dict) else str(error or text)
        except (ValueError, AttributeError):
            pass
        text = " ".join(self._redact(text).split())
        return text[:200] + ("..." if len(text) > 200 else "")

    def _failure(self, url: str, what: str, attempts: int) -> EngineError:
        return EngineError(self._redact(f"openai {self.model} at {_public_url(url)}: {what} "
                                        f"({attempts} attempt{'s' if attempts != 1 else ''})"))

    async def agenerate_one(self, request: Request) -> Response:
        path, body, chat = self._body(request)
        url = self.base_url + path
        client, slots = self._client()
        what = ""
        for attempt in range(self.max_retries + 1):
            delay: float | None = None
            try:
                async with slots:
                    response = await asyncio.wait_for(client.post(url, json=body), self.timeout)
            except (asyncio.TimeoutError, httpx.TimeoutException):
                what = f"timed out after {self.timeout:g}s"
            except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                what = f"connection failed ({type(exc).__name__}: {exc})"
            except httpx.HTTPError as exc:  # bad URL scheme, proxy errors: retrying will not help
                raise self._failure(url, f"{type(exc).__name__}: {exc}", attempt + 1) from None
            else:
                status = response.status_code
                if 200 <= status < 300:
                    try:
                        return self._parse(request, response, chat)
                    except _Unreadable as exc:  # a proxy's HTML page, a cut body: transient, retried
                        what = f"unreadable response ({exc}): {self._excerpt(response)}"
                else:
                    what = f"HTTP {status}: {self._excerpt(response)}"
                    if status != 429 and status < 500:
                        if status == 401 and not os.environ.get(self.api_key_env):
                            what += f" (environment variable {self.api_key_env} is not set)"
                        elif status == 404:
                            what += " (does the base URL end with the API prefix, e.g. /v1?)"
                        raise self._failure(url, what, attempt + 1)
                    if status in (429, 503):
                        delay = retry_after_seconds(response.headers.get("retry-after"))
            if attempt == self.max_retries:
                break
            if delay is None:
                delay = random.uniform(0.0, min(self.backoff_max, self.backoff_base * 2 ** attempt))
            delay = min(delay, self.backoff_max)
            log.info("%s", self._redact(f"openai {_public_url(url)}: {what}; retry {attempt + 1}/"
                                        f"{self.max_retries} in {delay:.2f}s"))
            await asyncio.sleep(delay)
        raise self._failure(url, what, self.max_retries + 1)

    def _parse(self, request: Request, response: httpx.Response, chat: bool) -> Response:
        try:
            data = response.json()
            choices = sorted(data["choices"], key=lambda choice: choice.get("index", 0))
            if not choices:
                raise ValueError("no choices")
            if chat:
                texts = [(choice.get("message") or {}).get("content") or "" for choice in choices]
            else:
                texts = [choice.get("text") or "" for choice in choices]
            logprobs = cumulative = None
            if _top_k(request.sampling) is not None:
                parse = _chat_logprobs if chat else _completion_logprobs
                logprobs = parse(choices[0].get("logprobs"))
                if logprobs is not None and request.sampling.logprob_tokens:
                    logprobs = _keep_asked(logprobs, request.sampling)
                    cumulative = sum(t.logprob for t in logprobs)
            usage = data.get("usage") or {}
            return Response(texts=texts, logprobs=logprobs, cumulative_logprob=cumulative,
                            prompt_tokens=int(usage.get("prompt_tokens") or 0),
                            completion_tokens=int(usage.get("completion_tokens") or 0),
                            finish_reason=choices[0].get("finish_reason") or "stop")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise _Unreadable(f"{type(exc).__name__}: {exc}") from None

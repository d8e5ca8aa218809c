"""What every engine of a hosted API (`openai`, `anthropic`, `gemini`) shares, whatever vendor SDK sends its
requests: the options (base URL, key variable, concurrency, timeout, retries, backoff), extra --model-arg fields
sent verbatim in every request body, a client made in the running event loop (a new loop is a new run), at most
`concurrency` requests in flight, closing, and failures as one line naming the model, the URL and the attempts
with every secret redacted: a `RequestError` when the request itself is at fault (HTTP 400, 422 and other 4xx),
an `EngineError` when the server is (connection, timeout, 429, 5xx) or the endpoint's set-up (401, 403, 404).

The key is read from $api_key_env when the client is made: it is never an attribute, never in `engine_id` (the
cache's key) or repr. The base URL's credentials (user info, secret query parameters: ragbench._values.urls)
stay out of `engine_id` too.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar
from urllib.parse import urlsplit

from annotated_types import Ge, Gt

from ..._errors import ConfigError
from ..._imports import import_extra
from ..._values.engine_errors import EngineError, RequestError
from ..._values.json_values import JsonObject
from ..._values.tool_calls import read_arguments
from ..._values.urls import Credentials, redact_url, secret_name
from ..base import Engine
from ..chat_messages import ToolCallForm
from .http import redact, request_at_fault


def extra_body_problems(extra: Mapping[str, object], reserved: frozenset[str], key_env: str) -> list[str]:
    """Why extra --model-arg fields (sent verbatim in every request body) cannot be sent."""
    problems = []
    secrets = sorted(name for name in extra if secret_name(name))
    if secrets:
        problems.append(
            f"--model-arg {', '.join(secrets)}: secrets are not accepted as --model-arg; put the key in "
            f"an environment variable and name it with --model-arg api_key_env=NAME (default {key_env})"
        )
    taken = sorted(set(extra) & reserved)
    if taken:
        problems.append(
            f"--model-arg {', '.join(taken)}: cannot be an option; it comes from the request's sampling parameters"
        )
    return problems


def optional_sdk(module: str, engine: str, extra: str, vendor: str) -> Any:
    """A vendor SDK that is an optional extra, imported on first use; without it, one line saying how to install it."""
    return import_extra(module, f"the {engine} engine needs {vendor}: pip install 'ragbench[{extra}]'")


def call_arguments_object(call: ToolCallForm) -> JsonObject:
    """A tool call's arguments (OpenAI form, text) as the JSON object an API that takes them as an object needs.
    A call whose arguments are no JSON object (the model wrote something else, which the system answered with
    an error: docs/agents.md) goes as `{}`, so that the conversation goes on."""
    arguments, _ = read_arguments(call["function"]["arguments"])
    return arguments if isinstance(arguments, dict) else {}


def attempts_text(attempts: int) -> str:
    return f"{attempts} attempt{'s' if attempts != 1 else ''}"


class ApiEngine(Engine):
    """Base of the hosted-API engines. A subclass sets `kind`, `DEFAULT_BASE_URL`, `BASE_URL_ENV`,
    `DEFAULT_KEY_ENV`, `RESERVED` (body fields it sets itself), and makes its SDK client (`open_client`) and
    closes it (`close_client`)."""

    concurrent = True
    calls_tools = True
    takes_images = True  # each vendor's form (openai, anthropic, gemini); a model without vision is the API's to refuse
    DEFAULT_BASE_URL: ClassVar[str]
    BASE_URL_ENV: ClassVar[str]  # the environment variable that may hold the base URL
    DEFAULT_KEY_ENV: ClassVar[str]
    RESERVED: ClassVar[frozenset[str]]
    EXAMPLE_BASE_URL: ClassVar[str] = "http://localhost:8000/v1"
    starts_processes = False  # it calls a service
    NOT_FOUND_HINT: ClassVar[str] = "does the base URL end with the API prefix, e.g. /v1?"  # said of an HTTP 404

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str | None = None,
        concurrency: Annotated[int, Ge(1)] = 16,
        timeout: Annotated[float, Gt(0)] = 60,
        max_retries: Annotated[int, Ge(0)] = 6,
        connect_retries: Annotated[int, Ge(0)] = 2,
        backoff_base: Annotated[float, Ge(0)] = 1.0,
        backoff_max: Annotated[float, Ge(0)] = 60,
        **options: Any,
    ) -> None:
        api_key_env = api_key_env or self.DEFAULT_KEY_ENV
        problems = extra_body_problems(options, self.RESERVED, self.DEFAULT_KEY_ENV)
        if problems:
            raise ConfigError(f"{self.kind} engine: {problems[0]}")
        base_url = self._base_url_of(base_url)
        try:
            parts = urlsplit(base_url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError("not an http(s) URL")
            self._base = Credentials.of(base_url)
        except ValueError:
            raise ConfigError(
                f"{self.kind} engine: --base-url must be an http(s) URL such as {self.EXAMPLE_BASE_URL}, "
                f"not {redact_url(base_url)!r}"
            ) from None
        super().__init__(model, **options)
        self.base_url = self._base.url.rstrip("/")  # without user info or query: shown, and keys the cache
        self.api_key_env = api_key_env
        self.max_concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.connect_retries = int(connect_retries)
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.extra_body = dict(options)  # --model-arg values arrive already parsed (YAML scalars)
        self._sdk: Any = None
        self._sdk_loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None
        self._closing: asyncio.Task[Any] | None = None

    @classmethod
    def preflight(cls, model: str, options: Mapping[str, object]) -> list[str]:
        """A given server (--base-url, or the vendor's base-URL variable) answers within a few seconds; the
        vendor's own API (no server given) has its key in the environment."""
        from ..._checks import unreachable

        url = options.get("base_url") or os.environ.get(cls.BASE_URL_ENV)
        key_env = str(options.get("api_key_env") or cls.DEFAULT_KEY_ENV)
        why = unreachable(cls._probe_url(str(url))) if url else None
        named = {
            name
            for klass in cls.__mro__
            if "__init__" in vars(klass)
            for name in inspect.signature(vars(klass)["__init__"]).parameters
        }
        extra = set(options) - named
        problems = [
            *super().preflight(model, options),
            *extra_body_problems({name: options[name] for name in extra}, cls.RESERVED, cls.DEFAULT_KEY_ENV),
            *([f"{why}; start the server or correct --base-url"] if why else []),
        ]
        if not url and not os.environ.get(key_env):
            problems.append(
                f"{cls.DEFAULT_BASE_URL} needs an API key: set ${key_env} (or name another variable with "
                f"--model-arg api_key_env=NAME), or give --base-url of a server speaking the {cls.kind} API"
            )
        return problems

    @classmethod
    def _base_url_of(cls, given: object) -> str:
        """The base URL requests go to: the one given (--base-url), else $BASE_URL_ENV's, else the vendor's."""
        return str(given or os.environ.get(cls.BASE_URL_ENV) or cls.DEFAULT_BASE_URL)

    @classmethod
    def sends_to(cls, options: Mapping[str, object]) -> list[str]:
        """The base URL of `options` (each of a list of endpoints), as the engine resolves it: --base-url, else
        $BASE_URL_ENV, else the vendor's; without user info or query."""
        given = options.get("base_url")
        urls = (
            [cls._base_url_of(url) for url in given] if isinstance(given, (list, tuple)) else [cls._base_url_of(given)]
        )
        out = []
        for url in urls:
            try:
                out.append(Credentials.of(url).url.rstrip("/"))
            except ValueError:  # not a URL: the engine refuses it
                out.append(redact_url(url))
        return out

    @classmethod
    def _probe_url(cls, base_url: str) -> str:
        """The URL the pre-flight asks (any answer says a server is there), without user info and query."""
        try:
            return Credentials.of(base_url).url.rstrip("/") + "/models"
        except ValueError:  # unreachable() names it
            return base_url

    def _id_options(self) -> str:
        """What `engine_id` adds after the model and base URL: the extra body fields, sorted."""
        return "".join(
            f";{name}={json.dumps(self.extra_body[name], sort_keys=True)}" for name in sorted(self.extra_body)
        )

    @property
    def engine_id(self) -> str:
        out = f"{self.kind}:{self.model}"
        if self.base_url != self.DEFAULT_BASE_URL.rstrip("/"):
            out += f"@{self.base_url}"
        return out + self._id_options()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
            f"concurrency={self.max_concurrency}, api_key_env={self.api_key_env!r})"
        )

    def detects_chat_model(self) -> bool:
        """True: a hosted model is taken for a chat model (`--model-arg chat=false` for a base model)."""
        return True

    # -- the SDK client, one per event loop -----------------------------------------------------

    def open_client(self) -> Any:
        raise NotImplementedError

    async def close_client(self, client: Any) -> None:
        await client.close()

    def _client(self) -> tuple[Any, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._sdk_loop is not loop or self._slots is None:
            # A new loop means a new run; the old client's connections belong to the old loop.
            self._sdk = self.open_client()
            self._sdk_loop = loop
            self._slots = asyncio.Semaphore(self.max_concurrency)
        return self._sdk, self._slots

    async def aclose(self) -> None:
        client, loop = self._sdk, self._sdk_loop
        self._sdk = self._sdk_loop = self._slots = None
        if client is not None and loop is asyncio.get_running_loop():
            await self.close_client(client)

    def close(self) -> None:
        client, loop = self._sdk, self._sdk_loop
        if client is None or loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._closing = loop.create_task(self.aclose())
            return
        self._sdk = self._sdk_loop = self._slots = None
        if running is None and not loop.is_closed():
            loop.run_until_complete(self.close_client(client))
        # otherwise the owning loop is gone and its sockets with it: nothing left to await

    # -- failures ---------------------------------------------------------------------------

    def failure(self, what: str, attempts: int, error: type[EngineError] = EngineError) -> EngineError:
        return error(self._redact(f"{self.kind} {self.model} at {self.base_url}: {what} ({attempts_text(attempts)})"))

    def status_failure(self, status: int, message: str, attempts: int, hint: str = "") -> EngineError:
        """An HTTP error status as one line (`hint`: what the engine adds); a RequestError when the request is
        at fault."""
        what = f"HTTP {status}: {self.excerpt(message)}"
        if status == 401 and not os.environ.get(self.api_key_env):
            what += f" (environment variable {self.api_key_env} is not set)"
        elif status == 404:
            what += f" ({self.NOT_FOUND_HINT})"
        elif hint:
            what += f" ({hint})"
        return self.failure(what, attempts, RequestError if request_at_fault(status) else EngineError)

    def _redact(self, text: str) -> str:
        return redact(text, self.api_key_env, self._base)

    def excerpt(self, text: str) -> str:
        text = " ".join(self._redact(text).split())
        return text[:200] + ("..." if len(text) > 200 else "")

"""What the batch loop (batches/runner.py) asks of an engine that answers the scheduler's requests through a
vendor's batch API, and of that vendor's side: public names only, so that an engine of a plugin can implement them
(docs/writing-plugins.md, "Engines that send batches"). The built-in `openai` and `anthropic` engines
(hosted/stainless.py) are two; their vendors' sides (hosted/batch_openai.py, hosted/batch_anthropic.py) read more of
their own engine (`SdkBatchingEngine`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..._values.engine_errors import EngineError
from ..._values.json_values import JsonObject
from ..._values.llm_request import Request
from ..._values.llm_responses import Response
from ..._values.sampling import Sampling
from .store import Submitted


@dataclass(frozen=True)
class Resend:
    """A request the vendor did not answer on its side (failed, expired, cancelled, left out): sent again."""

    why: str


@dataclass(frozen=True)
class Polled:
    """A batch's state as the vendor reports it; `failed`: why the vendor failed the batch as a whole."""

    state: str
    done: int
    total: int
    ended: bool
    failed: str | None = None


Outcome = Response | EngineError | Resend


@dataclass(frozen=True)
class BatchLimits:
    """What one batch may hold at a vendor: `requests` input lines, and `bytes` as the vendor receives the batch:
    each line's `size` (its bytes as sent), a `separator`'s bytes between two lines, and `framing`, the batch's
    bytes besides its lines. `docs`: where the vendor says so."""

    requests: int
    bytes: int
    size: Callable[[JsonObject], int]
    docs: str
    separator: int = 0
    framing: int = 0


class ResultsMissing(Exception):
    """An ended batch whose results file alone is not found (HTTP 404 for the file, the batch itself known): the
    vendor's failure, its requests sent again; never read as a batch unknown to the vendor."""


class BatchingEngine(Protocol):
    """An engine the batch loop answers through its vendor's batch API: its options (seconds between polls, tries
    of a request the vendor did not answer, tries of a batch's creation and the wait between them), the identity
    that names its requests, its vendor's side and the client it is called with, what a call to the vendor raises,
    and its failures as one line each."""

    model: str
    base_url: str
    batch_poll_s: float
    batch_retries: int
    max_retries: int
    backoff_base: float
    backoff_max: float

    @property
    def engine_id(self) -> str: ...

    @property
    def call_errors(self) -> tuple[type[Exception], ...]:
        """What a call of the vendor's side raises when it fails; one with an HTTP status carries `status_code`."""

    @property
    def unreachable(self) -> type[Exception]:
        """Of `call_errors`, the one that says nothing reached the server (a connection refused)."""

    @property
    def not_found(self) -> type[Exception]:
        """What polling a batch the vendor does not know raises (HTTP 404)."""

    def call_identity(self, sampling: Sampling) -> str: ...

    def batch_vendor(self) -> BatchVendor: ...

    def open_client(self) -> Any:
        """A client of the vendor for the batch loop's calls (closed with `close_client`)."""

    async def close_client(self, client: Any) -> None: ...

    def api_failure(self, exc: Exception, used: int, request: Request) -> EngineError:
        """`exc` (one of `call_errors`, after `used` attempts spent before it) as `request`'s one-line failure."""

    def failure(self, what: str, attempts: int, error: type[EngineError] = EngineError) -> EngineError:
        """The one-line failure saying `what` after `attempts` tries."""

    def excerpt(self, text: str) -> str:
        """`text` cut short for a line (credentials left out)."""


class SdkBatchingEngine(BatchingEngine, Protocol):
    """What the built-in vendors' sides read besides of the engine (hosted/stainless.py): its SDK module, the
    variable of its key, the fields added to every body, and its HTTP failures."""

    api_key_env: str
    extra_body: dict[str, Any]

    @property
    def sdk(self) -> Any: ...

    def status_failure(self, status: int, message: str, attempts: int, hint: str = "") -> EngineError: ...

    def status_hint(self, request: Request, what: str) -> str: ...


class BatchVendor(Protocol):
    """One vendor's batch API over the engine's client (`BatchingEngine.open_client`)."""

    def line(self, request: Request, custom: str) -> tuple[str, JsonObject]:
        """(endpoint, the batch's input line for `request`); RequestError where it cannot be sent."""

    async def create(
        self, client: Any, endpoint: str, lines: list[JsonObject], intent: str, upload: Callable[[str], None]
    ) -> str:
        """Upload and create a batch of `lines` (tagged with `intent` where the vendor takes a tag): its id. An input
        file uploaded for it is told to `upload` (its id) before the batch is asked for. Tried once, without the
        client's own retries (after an answer lost, a retry would create a second batch, paid twice): the loop finds
        the batch of a try that failed at the vendor (`candidates`) before it tries again."""

    async def discard(self, client: Any, file_id: str) -> bool:
        """Delete the input file `file_id` uploaded for a batch the vendor never created; False: it was gone."""

    async def candidates(self, client: Any, intent: Submitted, known: set[str]) -> list[tuple[str, bool]]:
        """The vendor's batches, not among `known`, that may be `intent`'s, each with whether it surely is (its tag);
        one not sure is `intent`'s when its results hold none but its custom ids (one at least)."""

    async def poll(self, client: Any, batch_id: str) -> Polled: ...

    async def results(self, client: Any, batch_id: str) -> list[str]:
        """An ended batch's result lines (answers and errors) as the vendor sent them (results.text_lines)."""

    def outcome(self, line: dict[str, Any], request: Request) -> Outcome:
        """What one result line says of `request` (ValueError, TypeError, KeyError, AttributeError, RecursionError:
        unreadable, sent again). A vendor's side may also have `billed(line)`, the token counts the line's answer
        was billed for, which the loop counts where it does not take the line (runner.BatchRun._bill), and
        `limits`, a `BatchLimits`: the loop cuts its batches within them (batches/cuts.py)."""

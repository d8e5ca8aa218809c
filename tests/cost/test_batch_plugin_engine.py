"""The batch loop over an engine of a plugin that implements only its public interface (`ragbench.api.engines`:
BatchingEngine, BatchVendor, BatchShelf, BatchRun; docs/writing-plugins.md "Engines that send batches"): no SDK, no
base class of ragbench's hosted engines, no private method. A vendor held in memory answers; a batch it does not know fails its
requests in one line through the engine's own `not_found` and `failure`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ragbench.api import EngineError
from ragbench.api.engines import BatchBoard, BatchRun, BatchShelf, Polled, Request, Response, Sampling


class VendorDown(Exception):
    """The plugin's 'no server there'."""


class UnknownBatch(Exception):
    """The plugin's HTTP 404."""

    status_code = 404


class MemoryVendor:
    """A vendor's batch API held in memory: a batch ends at its first poll, each line answered with its prompt
    upper-cased; `forget` batches are unknown to it."""

    def __init__(self, forget: bool = False) -> None:
        self.batches: dict[str, list[dict[str, Any]]] = {}
        self.forget = forget

    def line(self, request: Request, custom: str) -> tuple[str, dict[str, Any]]:
        return "/answers", {"custom_id": custom, "prompt": request.prompt}

    async def create(self, client: Any, endpoint: str, lines: list[Any], intent: str, upload: Any) -> str:
        batch_id = f"b{len(self.batches)}"
        self.batches[batch_id] = lines
        return batch_id

    async def discard(self, client: Any, file_id: str) -> bool:
        return True

    async def candidates(self, client: Any, intent: Any, known: set[str]) -> list[tuple[str, bool]]:
        return []

    async def poll(self, client: Any, batch_id: str) -> Polled:
        if self.forget:
            raise UnknownBatch(f"no batch {batch_id}")
        size = len(self.batches[batch_id])
        return Polled("ended", size, size, True)

    async def results(self, client: Any, batch_id: str) -> list[str]:
        return [
            json.dumps({"custom_id": line["custom_id"], "text": line["prompt"].upper()})
            for line in self.batches[batch_id]
        ]

    def outcome(self, line: dict[str, Any], request: Request) -> Response:
        return Response(texts=[line["text"]])


class PluginEngine:
    """A third party's engine: the public members of BatchingEngine, nothing else."""

    model, base_url, engine_id = "m", "memory://vendor", "plugin:m"
    batch_poll_s, batch_retries, max_retries, backoff_base, backoff_max = 0.0, 1, 1, 0.0, 0.0
    call_errors: tuple[type[Exception], ...] = (VendorDown, UnknownBatch)
    unreachable: type[Exception] = VendorDown
    not_found: type[Exception] = UnknownBatch

    def __init__(self, vendor: MemoryVendor) -> None:
        self.vendor = vendor
        self.closed = 0

    def call_identity(self, sampling: Sampling) -> str:
        return self.engine_id

    def batch_vendor(self) -> MemoryVendor:
        return self.vendor

    def open_client(self) -> object:
        return object()

    async def close_client(self, client: Any) -> None:
        self.closed += 1

    def api_failure(self, exc: Exception, used: int, request: Request) -> EngineError:
        return self.failure(str(exc), used + 1)

    def failure(self, what: str, attempts: int, error: type[EngineError] = EngineError) -> EngineError:
        return error(f"plugin {self.model}: {what} ({attempts} attempt(s))")

    def excerpt(self, text: str) -> str:
        return text[:200]


def answered(engine: PluginEngine, folder: Path, board: BatchBoard, prompts: list[str]) -> list[Any]:
    shelf: BatchShelf[Any] = BatchShelf.of([engine])
    shelf.keep_in(folder, board)
    return asyncio.run(BatchRun(engine, shelf).answer([Request(prompt=p) for p in prompts]))


def test_an_engine_of_the_public_interface_alone_is_answered_in_batches(tmp_path):
    engine, board = PluginEngine(MemoryVendor()), BatchBoard()
    answers = answered(engine, tmp_path, board, ["one", "two"])
    assert [a.texts for a in answers] == [["ONE"], ["TWO"]]
    assert engine.closed == 1 and board.line() == ""  # its client closed, no batch left on the run's bar


def test_a_batch_the_plugins_vendor_does_not_know_fails_in_one_line_of_the_engine(tmp_path):
    engine = PluginEngine(MemoryVendor(forget=True))
    (answer,) = answered(engine, tmp_path, BatchBoard(), ["one"])
    assert isinstance(answer, EngineError)
    assert str(answer).startswith("plugin m: batch b0 is unknown to the vendor (HTTP 404: no batch b0)")

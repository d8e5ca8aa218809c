"""No call awaited through the scheduler is left unanswered when the code that should answer it raises: the
caller gets the error (its example fails, counted) and the other callers, and later calls, go on; an engine's answer
that is no answer (the openai engine's malformed tool call) is that call's counted error."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest
from test_engine_openai_tools import ASKED, SEARCH, call, engine, server, tool_reply  # noqa: F401 (server: a fixture)

from ragbench._engines.scripted import ScriptedEngine
from ragbench._llm import LLM
from ragbench._retrieval.handle import Retrieval
from ragbench._scheduler import Scheduler
from ragbench._storage.cache import ResponseCache
from ragbench.api import Document, EngineError
from ragbench.api.engines import Engine, Request, Response
from ragbench.api.retrieval import RetrievalError, Retriever

# A safety net only: every call below is answered at once; a caller left waiting fails the test here, not by hanging.
ANSWERED_WITHIN = 30


async def answered(*calls):
    return await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), ANSWERED_WITHIN)


@dataclass(frozen=True)
class Unmeasurable:
    """A request whose length cannot be read (a search query 5: `len(5)` raises)."""

    text: object
    batch_key = None

    def text_length(self) -> int:
        return len(self.text)  # type: ignore[arg-type]

    def cache_key(self, backend_id: str) -> str:
        return f"{backend_id}\x00{self.text!r}"


class Echo:
    """A batch backend answering each request's text."""

    engine_id = "echo"
    concurrent = False
    cacheable = False
    max_batch_size = 8
    max_concurrency = 1

    def generate(self, requests):
        return [str(request.text) for request in requests]


class Unequal:
    """A value whose comparison raises: an engine's own object where the answer's finish reason belongs."""

    def __eq__(self, other):
        raise RuntimeError("compared")

    __hash__ = object.__hash__


def unreadable_answer(request: Request) -> Response:
    return Response(texts=["x"], finish_reason=Unequal())  # type: ignore[arg-type]


class ConcurrentEngine(Engine):
    """An engine that batches by itself (an HTTP server's), answering what `answer` makes of each request."""

    kind = "concurrent_test"
    concurrent = True

    def __init__(self, answer) -> None:
        super().__init__("test")
        self.answer = answer

    async def agenerate_one(self, request: Request) -> Response:
        return self.answer(request)

    def generate(self, requests):
        return [self.answer(request) for request in requests]


async def test_a_request_whose_length_cannot_be_read_fails_its_own_caller_alone():
    scheduler = Scheduler()
    backend = Echo()
    try:
        results = await answered(
            scheduler.submit(backend, Unmeasurable("a")),  # type: ignore[arg-type]
            scheduler.submit(backend, Unmeasurable(5)),  # type: ignore[arg-type]
            scheduler.submit(backend, Unmeasurable("bc")),  # type: ignore[arg-type]
        )
        assert results[0] == "a" and results[2] == "bc"
        assert isinstance(results[1], TypeError)
        assert await answered(scheduler.submit(backend, Unmeasurable("later"))) == ["later"]  # type: ignore[arg-type]
    finally:
        await scheduler.close()


@pytest.mark.parametrize(
    "engine",
    [ScriptedEngine(script=unreadable_answer), ConcurrentEngine(unreadable_answer)],
    ids=["batching", "concurrent"],
)
async def test_an_answer_whose_check_raises_is_that_calls_engine_error(engine):
    scheduler = Scheduler()
    llm = LLM(scheduler, engine)
    try:
        results = await answered(llm.generate("one"), llm.generate("two"))
    finally:
        await scheduler.close()
    assert all(isinstance(result, EngineError) for result in results)
    assert "answered no valid response: reading it raised RuntimeError: compared" in str(results[0])
    assert scheduler.stats.errors == 2 and scheduler.stats.in_flight == 0


def failing_once(method, before: bool):
    """`method`, whose first call raises a RuntimeError before it runs (`before`) or after it had its effect."""
    failed: list[bool] = []

    def fail(result=None):
        if failed:
            return result
        failed.append(True)
        if asyncio.iscoroutine(result):
            result.close()
        raise RuntimeError("injected")

    if not asyncio.iscoroutinefunction(method):  # `_take_batch`: the batch has left the queue when it raises
        return lambda self, *args: fail(method(self, *args))

    async def run(self, *args):
        if before:
            fail()
        result = await method(self, *args)
        return fail(result) if not before else result

    return run


@pytest.mark.parametrize(
    ("step", "before"),
    [
        ("_take_batch", False),  # the batch taken from the queue, not yet sent
        ("_deliver", True),  # the batch sent and computed, its answers not yet out
        ("_deliver", False),  # answers out: nothing owed, the queue goes on
        ("_settle", True),  # requests queued, none taken
    ],
)
async def test_whatever_the_dispatcher_raises_every_request_it_owes_is_answered(monkeypatch, step, before):
    monkeypatch.setattr(Scheduler, step, failing_once(getattr(Scheduler, step), before))
    engine = ScriptedEngine(script=lambda request: request.prompt or "")
    scheduler = Scheduler()
    llm = LLM(scheduler, engine)
    try:
        results = await answered(*(llm.generate(f"p{i}") for i in range(3)))
        later = await answered(llm.generate("later"))
    finally:
        await scheduler.close()
    for result in results:
        assert isinstance(result, Response) or "scheduler failed: RuntimeError: injected" in str(result)
    assert later[0].text == "later"
    assert scheduler.stats.in_flight == 0


class OneDoc(Retriever):
    name = "one_doc"

    def search(self, queries, k):
        return [[Document(id=str(query), title="", text=str(query))] for query in queries]


@pytest.mark.parametrize("query", [5, None, ["a", "b"], {"q": "x"}, b"bytes"])
async def test_a_search_whose_query_is_no_text_fails_that_search_alone(query):
    retrieval = Retrieval(OneDoc())
    try:
        results = await answered(retrieval.search("fine", 1), retrieval.search(query, 1))
    finally:
        await retrieval.close()
    assert [doc.id for doc in results[0]] == ["fine"]
    assert isinstance(results[1], RetrievalError)
    assert str(results[1]).startswith(f"search query {query!r}: expected a text (str), not {type(query).__name__}")


async def short_read(keys):
    return []


async def cancelled_read(keys):
    raise asyncio.CancelledError


@pytest.mark.parametrize("read", [short_read, cancelled_read], ids=["short", "cancelled"])
async def test_every_cache_lookup_is_answered_when_the_read_fails(tmp_path, monkeypatch, read):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    monkeypatch.setattr(cache._store, "get_many", read)
    try:
        results = await answered(cache.aget("a"), cache.aget("b"))
    finally:
        cache.close()
    if read is short_read:
        assert all("the response cache read 0 entries for 2 lookups" in str(result) for result in results)
    else:
        assert all(isinstance(result, asyncio.CancelledError) for result in results)


@pytest.mark.parametrize(
    "calls",
    [
        [call("call_1", "{}", name=None)],
        [{"id": "c", "type": "function"}],
        [call("call_1", {"query": "x"})],
        "not a list",
    ],
)
def test_a_malformed_tool_call_is_that_calls_counted_engine_error(server, calls):
    server.then(tool_reply(calls))
    scheduler = Scheduler()
    llm = LLM(scheduler, engine(server))

    async def go() -> None:
        try:
            await llm.chat(ASKED, tools=[SEARCH])
        finally:
            await scheduler.close()
            await llm.engine.aclose()

    with pytest.raises(EngineError, match="tool_calls"):
        asyncio.run(go())
    assert scheduler.stats.to_dict()["errors"] == 1

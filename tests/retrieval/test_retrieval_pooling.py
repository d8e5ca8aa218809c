"""ctx.retriever: the queries of all in-flight examples are pooled into few batched searches, traced
per example, with the same answers as one query at a time; and a whole run with a bm25 index."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import pytest

from ragbench.api import ConfigError, Context, Document, Example, Prediction, System
from ragbench.api.engines import Engine
from ragbench.api.retrieval import RetrievalError, Retriever
from ragbench.testing import Registry, ScriptedLLM, installed_registry, load_retriever, run_eval, run_examples
from support.helpers import samples


class CountingRetriever(Retriever):
    """Answers `k` documents made from the query; records every search call."""

    name = "counting"

    def __init__(self, max_batch_size: int = 64, fail_on: str | None = None) -> None:
        self.max_batch_size = max_batch_size
        self.fail_on = fail_on
        self.calls: list[tuple[list[str], int]] = []

    def search(self, queries, k):
        self.calls.append((list(queries), k))
        if self.fail_on in queries:
            raise ValueError(f"cannot search {self.fail_on!r}")
        return [[Document(id=f"{q}#{i}", title="", text=q, score=float(k - i)) for i in range(k)] for q in queries]


Searches = Callable[[Example, Context], Awaitable[object]]


class Searching(System):
    """Runs `searches(example, ctx)` and keeps what it returns by example id; what it raises fails the example."""

    name = "searching"

    def __init__(self, searches: Searches) -> None:
        self.searches = searches
        self.found: dict[str, object] = {}

    async def run(self, example: Example, ctx: Context) -> Prediction:
        self.found[example.id] = await self.searches(example, ctx)
        return Prediction(example_id=example.id, answer="")


def examples(n: int, docs: list[Document] | None = None) -> list[Example]:
    return [Example(id=f"e{i}", question=f"q{i}", index=i, docs=list(docs or [])) for i in range(n)]


async def search_with(
    retriever: Retriever, searches: Searches, n: int = 1, docs=None, items: list[Example] | None = None
) -> tuple[Searching, list]:
    """`searches` run by `n` examples (or `items`) in flight at once, as a run runs them: (the system, the sample
    records)."""
    system = Searching(searches)
    given = items if items is not None else examples(n, docs)
    records = await run_examples(system, given, ScriptedLLM("unused"), retriever=retriever)
    return system, records


def rounds(rounds_of: Callable[[int], int], k: int = 3) -> Searches:
    """A multi-step system in miniature: each round searches with what the last round found."""

    async def loop(example: Example, ctx: Context) -> list[str]:
        query, seen = example.question, []
        for _ in range(rounds_of(example.index)):
            docs = await ctx.retriever.search(query, k)
            seen.append(docs[0].id)
            query = docs[0].id + "+"
        return seen

    return loop


async def pooled(retriever: Retriever, n: int = 20, rounds_of: Callable[[int], int] = lambda i: 1) -> list:
    """What each of `n` examples found in its rounds, in example order."""
    system, _ = await search_with(retriever, rounds(rounds_of), n)
    return [system.found[f"e{i}"] for i in range(n)]


async def test_twenty_concurrent_examples_make_one_search_call():
    retriever = CountingRetriever()
    answers = await pooled(retriever, n=20)
    assert [(sorted(queries), k) for queries, k in retriever.calls] == [(sorted(f"q{i}" for i in range(20)), 3)]
    assert answers[3] == ["q3#0"]


async def test_search_calls_are_cut_at_the_retrievers_batch_limit():
    retriever = CountingRetriever(max_batch_size=8)
    await pooled(retriever, n=20)
    assert [len(queries) for queries, _ in retriever.calls] == [8, 8, 4]


async def test_examples_with_different_round_counts_share_one_search_per_round():
    retriever = CountingRetriever()
    await pooled(retriever, n=20, rounds_of=lambda i: 1 + i % 3)
    assert [len(queries) for queries, _ in retriever.calls] == [20, 13, 6]


async def test_answers_do_not_depend_on_batching():
    one_by_one = await pooled(CountingRetriever(max_batch_size=1), rounds_of=lambda i: 1 + i % 3)
    together = await pooled(CountingRetriever(), rounds_of=lambda i: 1 + i % 3)
    assert one_by_one == together and together[2] == ["q2#0", "q2#0+#0", "q2#0+#0+#0"]


async def test_searches_with_different_k_are_never_mixed():
    retriever = CountingRetriever()

    async def search(example: Example, ctx: Context) -> object:
        return await ctx.retriever.search(example.question, 2 + example.index % 2)

    await search_with(retriever, search, n=10)
    assert sorted((len(queries), k) for queries, k in retriever.calls) == [(5, 2), (5, 3)]


async def test_identical_queries_in_flight_are_searched_once():
    retriever = CountingRetriever()

    async def search(example: Example, ctx: Context) -> object:
        return await ctx.retriever.search("same", 2)

    system, _ = await search_with(retriever, search, n=5)
    assert retriever.calls == [(["same"], 2)]
    results = [system.found[f"e{i}"] for i in range(5)]
    results[0][0].metadata["summary"] = "annotated by one example"
    assert [docs[0].metadata for docs in results[1:]] == [{}] * 4  # every example gets its own copies


async def test_each_search_is_traced_as_a_retrieval_step_of_its_example():
    async def search(example: Example, ctx: Context) -> object:
        return await ctx.retriever.search("who?", 2, step="first_round")

    _, [record] = await search_with(CountingRetriever(), search)
    [step] = record.trace
    assert (step.kind, step.name, step.error) == ("retrieval", "first_round", None)
    assert step.request == {"retriever": "counting", "query": "who?", "k": 2}
    assert step.response == {"ids": ["who?#0", "who?#1"], "scores": [2.0, 1.0]}


async def test_a_failing_search_raises_a_retrieval_error_recorded_in_the_trace():
    async def search(example: Example, ctx: Context) -> object:
        with pytest.raises(RetrievalError, match="ValueError: cannot search 'bad'"):
            await ctx.retriever.search("bad", 2)
        return await ctx.retriever.search("good", 1)  # the next search works

    system, [record] = await search_with(CountingRetriever(fail_on="bad"), search)
    assert record.error is None and system.found["e0"]
    assert record.trace[0].error.startswith("RetrievalError: ValueError") and record.trace[1].error is None


class AnswersAnErrorFor(CountingRetriever):
    """Puts a RetrievalError in the place of the one query it cannot answer (`Retriever.search`'s contract);
    `own_documents`: searched as an example's own retriever (`for_example`, not pooled), else through the pool."""

    def __init__(self, unanswerable: str, own_documents: bool) -> None:
        super().__init__()
        self.unanswerable, self.own_documents = unanswerable, own_documents

    def search(self, queries, k):
        answered = super().search(queries, k)
        return [
            RetrievalError(f"no answer for {query!r}") if query == self.unanswerable else docs
            for query, docs in zip(queries, answered)
        ]

    def for_example(self, example):
        return self if self.own_documents else None


@pytest.mark.parametrize("own_documents", [False, True])
async def test_a_query_answered_with_a_retrieval_error_fails_alone(own_documents):
    async def search(example: Example, ctx: Context) -> object:
        return await asyncio.gather(
            ctx.retriever.search("good", 1), ctx.retriever.search("bad", 1), return_exceptions=True
        )

    system, [record] = await search_with(AnswersAnErrorFor("bad", own_documents), search)
    good, bad = system.found["e0"]
    assert [doc.id for doc in good] == ["good#0"]
    assert isinstance(bad, RetrievalError) and str(bad) == "no answer for 'bad'"
    assert sorted(step.error or "" for step in record.trace) == ["", "RetrievalError: no answer for 'bad'"]


DOCS = [Document(id=str(i), title=f"T{i}", text="t") for i in range(4)]


async def test_provided_retriever_answers_with_the_examples_own_documents():
    provided = load_retriever(None, registry=installed_registry())

    async def search(example: Example, ctx: Context) -> object:
        return await ctx.retriever.search("any query", 2)

    system, [record] = await search_with(provided, search, docs=DOCS)
    # searched for the example alone: through the pool, the provided retriever's own search refuses
    assert [d.id for d in system.found["e0"]] == ["0", "1"] and record.trace[0].response["ids"] == ["0", "1"]
    with pytest.raises(RetrievalError, match="answers for one example"):
        provided.search(["q"], 2)


@pytest.mark.parametrize("k", [-1, 2.0, True])
async def test_a_search_for_a_negative_or_not_whole_k_fails_the_example_for_every_retriever(k):
    async def search(example: Example, ctx: Context) -> object:
        return await ctx.retriever.search("any query", k)  # provided answered k=-1 with every document but the last

    _, [record] = await search_with(load_retriever(None, registry=installed_registry()), search, docs=DOCS)
    assert f"search k={k!r}: expected a whole number >= 0" in record.error
    assert record.trace[0].error.startswith("RetrievalError: search k=")


# --- a whole run: a system that retrieves through ctx.retriever from a bm25 index ------------------


class RetrieveThenAnswer(System):
    """Retrieves for the question, asks the LLM, retrieves again with the model's answer."""

    name = "retrieve_then_answer"

    def __init__(self, k: int = 2) -> None:
        self.k = int(k)

    async def run(self, example: Example, ctx: Context) -> Prediction:
        docs = await ctx.retriever.search(example.question, self.k)
        response = await ctx.llm.generate(docs[0].text, max_tokens=8)
        docs = await ctx.retriever.search(response.text, self.k, step="second_round")
        return Prediction(example_id=example.id, answer=docs[0].text, raw_output=docs[0].text, docs=docs)


@pytest.fixture
def demo_index(tmp_path):
    pytest.importorskip("bm25s")
    from ragbench.tasks.selfrag.demo import Demo
    from ragbench.testing import build_index

    corpus = tmp_path / "demo_corpus.jsonl"
    with open(corpus, "w", encoding="utf-8") as handle:
        for example in Demo().examples():
            for doc in example.docs:
                handle.write(json.dumps({"id": doc.id, "title": doc.title, "contents": doc.text}) + "\n")
    build_index(corpus, tmp_path / "index", "bm25", chunk_size=10, progress=False, registry=installed_registry())
    return tmp_path / "index"


def registry_with_test_system() -> Registry:
    registry = Registry.discover()
    registry.add_catalog({"systems": {"retrieve_then_answer": {"target": f"{__name__}:RetrieveThenAnswer"}}}, "tests")
    return registry


class LoadedEngine(Engine):
    """Records that a run loaded it (`--model loaded:NAME`)."""

    loaded: list[str] = []

    def __init__(self, model: str, **options: object) -> None:
        super().__init__(model, **options)
        LoadedEngine.loaded.append(model)


def test_a_run_retrieves_from_the_index_in_pooled_searches(tmp_path, demo_index):
    run = run_eval(
        "demo",
        "retrieve_then_answer",
        "scripted:echo",
        retriever="bm25",
        retriever_args={"index": str(demo_index)},
        output=tmp_path / "run",
        bootstrap_iters=10,
        registry=registry_with_test_system(),
    )
    results = run.results
    assert results["counts"]["demo"]["failed"] == 0
    assert results["config"]["retriever_metadata"]["retriever"] == "bm25"
    assert results["config"]["retriever_metadata"]["doc_count"] > 24
    # pooled: 48 queries in a few searches (usually 2-4; a loaded CI machine splits a batch more)
    assert results["cost"]["retrieval"]["queries"] == 48 and results["cost"]["retrieval"]["searches"] <= 8
    first = samples(tmp_path / "run", "demo")[0]
    steps = [step for step in first["trace"] if step["kind"] == "retrieval"]
    assert [step["name"] for step in steps] == ["retrieve", "second_round"]
    assert steps[0]["request"]["query"] == "What is the capital of France?"
    assert first["prediction"]["docs"][0]["id"] == steps[1]["response"]["ids"][0]
    assert "Paris" in first["trace"][1]["request"]["prompt"]  # the LLM saw the top BM25 passage


def test_a_run_with_a_missing_index_stops_before_anything_loads(tmp_path, monkeypatch):
    registry = Registry.discover()
    registry.add_catalog({"engines": {"loaded": {"target": f"{__name__}:LoadedEngine"}}}, "tests")
    monkeypatch.setattr(LoadedEngine, "loaded", [])
    with pytest.raises(ConfigError, match=r"retriever bm25: index folder .*nowhere does not exist"):
        run_eval(
            "demo",
            "vanilla",
            "loaded:m",
            retriever="bm25",
            retriever_args={"index": str(tmp_path / "nowhere")},
            output=tmp_path / "run",
            registry=registry,
        )
    assert LoadedEngine.loaded == [] and not (tmp_path / "run").exists()

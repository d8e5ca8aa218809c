"""The reranker's and refiner's work pooled across the examples in flight: one scoring call for the reranks of
every example waiting, each answered with its own pairs' scores; a refiner's documents shown as it gives them. Runs
through `run_eval`, read from the samples' traces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api import Document, Example, Prediction, SampleRecord, System, SystemDeclaration, Task, hookimpl
from ragbench.api.retrieval import Refiner, Reranker
from ragbench.testing import Registry, run_eval
from support.helpers import samples


class LengthReranker(Reranker):
    """Scores a pair by its passage's length less its query's; `calls`: each scoring call's pairs, of every
    instance."""

    name = "length"
    calls: list[list[tuple[str, str]]] = []

    def score_pairs(self, pairs):
        LengthReranker.calls.append(list(pairs))
        return [float(len(passage) - len(query)) for query, passage in pairs]


class FirstHalf(Refiner):
    """Keeps the first half of the documents (rounded up)."""

    name = "first_half"

    def refine_batch(self, items):
        return [docs[: (len(docs) + 1) // 2] for _, docs in items]


class Given(Task):
    """The examples a test puts in `EXAMPLES`: each a question and its documents' texts."""

    name = "given_examples"
    EXAMPLES: list[tuple[str, list[str]]] = []

    def examples(self):
        for i, (question, texts) in enumerate(self.EXAMPLES):
            docs = [Document(id=f"{i}-{j}", title="", text=text) for j, text in enumerate(texts)]
            yield Example(id=str(i), question=question, gold={"answers": ["x"]}, docs=docs, index=i)


class SearchThenRefine(System):
    """Searches its question for `k` documents and shows what the refiner makes of them."""

    name = "search_then_refine"
    declares = SystemDeclaration(retrieves=True)

    def __init__(self, k: int = 3) -> None:
        self.k = k

    async def run(self, example, ctx):
        docs = await ctx.retriever.search(example.question, self.k)
        shown = await ctx.retriever.refine("q", docs)
        return Prediction(example_id=example.id, answer="x", docs=shown)


def pooled_run(examples: list[tuple[str, list[str]]], k: int, **options) -> list[SampleRecord]:
    """The samples of a run of `examples`, all in flight at once, reranked by `length`."""
    Given.EXAMPLES, LengthReranker.calls[:] = examples, []
    registry = Registry.discover()
    registry.add_catalog(
        {
            "rerankers": {"length": {"target": f"{__name__}:LengthReranker"}},
            "refiners": {"first_half": {"target": f"{__name__}:FirstHalf"}},
        },
        "tests",
    )
    run = run_eval(
        Given,
        SearchThenRefine,
        metrics=["match"],
        system_args={"k": k},
        reranker="length",
        max_inflight=len(examples),
        bootstrap_iters=0,
        registry=registry,
        **options,
    )
    assert run.results["counts"]["given_examples"]["scored"] == len(examples), run.results["counts"]
    return run.samples["given_examples"]


texts = st.text(alphabet="abc ", max_size=6)


@settings(max_examples=50, deadline=None)
@given(requests=st.lists(st.tuples(texts, st.lists(texts, min_size=1, max_size=5)), min_size=1, max_size=6))
def test_one_scoring_call_answers_each_rerank_with_its_own_pairs_scores(requests):
    """Each example's every document (at most 5: the reranker's retrieval_topk) reranked with its own pair's score,
    the pairs of every example in one call."""
    done = pooled_run(requests, k=5)
    for (question, texts), sample in zip(requests, done):
        [rerank] = [step for step in sample.trace if step.name == "rerank"]
        assert sorted(rerank.response["ids"]) == [f"{sample.id}-{j}" for j in range(len(texts))]
        by_id = {doc["id"]: doc["text"] for doc in rerank.docs}
        assert rerank.response["scores"] == [float(len(by_id[i]) - len(question)) for i in rerank.response["ids"]]
    distinct = {(question, tuple(texts)) for question, texts in requests}  # identical reranks share one request
    assert len(LengthReranker.calls) == 1 and len(LengthReranker.calls[0]) == sum(len(ts) for _, ts in distinct)


def example_texts(i: int) -> list[str]:
    return ["x" * ((i * 7 + j * 3) % 11) for j in range(6)]


def test_the_reranks_of_examples_searching_together_are_one_scoring_call_and_refiners_documents_are_shown():
    done = pooled_run([(f"q{i}", example_texts(i)) for i in range(5)], k=3, refiner="first_half")
    # each example's first 5 documents (max(k, retrieval_topk=5)), the 5 examples' 25 pairs scored at once
    assert [len(call) for call in LengthReranker.calls] == [25]
    for i, sample in enumerate(done):
        own = example_texts(i)
        best = sorted(range(5), key=lambda j: -(len(own[j]) - len(f"q{i}")))[:3]
        docs = [doc.to_dict() for doc in sample.docs]
        [rerank] = [step for step in sample.trace if step.name == "rerank"]
        assert [doc["id"] for doc in rerank.docs] == [f"{i}-{j}" for j in best]
        assert docs == rerank.docs[:2]
        assert [(step.kind, step.name) for step in sample.trace] == [
            ("retrieval", "retrieve"),
            ("custom", "rerank"),
            ("custom", "refine"),
        ]
        assert sample.trace[2].docs == docs


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
    results = run_eval(
        "demo",
        "vanilla",
        system_args={"top_n": 3},
        reranker="length",
        refiner="first_half",
        limit=2,
        output=tmp_path / "run",
        registry=registry,
    ).results
    assert results["complete"] and results["config"]["retriever_metadata"] == {
        "retriever": "provided",
        "reranker": {"reranker": "length"},
        "refiner": {"refiner": "first_half"},
    }
    for sample in samples(tmp_path / "run", "demo"):
        [rerank] = [step for step in sample["trace"] if step["name"] == "rerank"]
        assert [doc["id"] for doc in sample["prediction"]["docs"]] == [doc["id"] for doc in rerank["docs"][:2]]

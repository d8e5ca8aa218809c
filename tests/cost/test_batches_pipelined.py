"""A model's batches are chosen the same way on any machine, full, and computed while the examples the batch
before answered run (the scheduler's dispatch, the examples in flight's searches): runs through `run_eval`, the
batches as a `ScriptedLLM` was given them."""

from __future__ import annotations

import time

import pytest

from conftest import write_jsonl
from ragbench.api import Document, Prediction, System
from ragbench.api.retrieval import Retriever
from ragbench.testing import Registry, ScriptedLLM, load_engine, run_eval


class SearchThenAsk(System):
    """Searches, then asks the model, one to three times (by the example's id)."""

    name = "search_then_ask"

    async def run(self, example, ctx):
        text = example.question
        for step in range(1 + int(example.id) % 3):
            docs = await ctx.retriever.search(f"{example.question} {step}", 2)
            text = (await ctx.llm.generate(f"{example.question} step {step}: {len(docs)} {text[-8:]}")).text
        return Prediction(example_id=example.id, answer=text)


class AskTwice(System):
    """Two calls in a row."""

    name = "ask_twice"

    async def run(self, example, ctx):
        answer = (await ctx.llm.generate(f"{example.question} call 0")).text
        answer = (await ctx.llm.generate(f"{example.question} call 1: {answer[-4:]}")).text
        return Prediction(example_id=example.id, answer=answer)


class FourAtATime(Retriever):
    """Four queries per search; `seconds`: how long each search takes."""

    name = "four_at_a_time"
    max_batch_size = 4

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = float(seconds)

    def search(self, queries, k):
        if self.seconds:
            time.sleep(self.seconds)
        return [
            [Document(id=f"d{i}", title="t", text=f"{query} {i}", score=1.0 / (i + 1)) for i in range(k)]
            for query in queries
        ]


def echo(request) -> str:
    """The prompt's last line, as `scripted:echo` answers."""
    return request.prompt.rsplit("\n", 1)[-1]


def batches(llm: ScriptedLLM) -> list[list[str]]:
    """The prompts of each batch `llm` computed, in order."""
    prompts = [request.prompt for request in llm.requests]
    starts = [sum(llm.batch_sizes[:i]) for i in range(len(llm.batch_sizes) + 1)]
    return [prompts[start:end] for start, end in zip(starts, starts[1:])]


def registry() -> Registry:
    found = Registry.discover()
    found.add_catalog(
        {
            "systems": {
                "search_then_ask": {"target": f"{__name__}:SearchThenAsk"},
                "ask_twice": {"target": f"{__name__}:AskTwice"},
            },
            "retrievers": {"four_at_a_time": {"target": f"{__name__}:FourAtATime"}},
        },
        "tests",
    )
    return found


def popqa(tmp_path, count: int) -> str:
    rows = [
        {"question": f"Who is person {i}?", "answers": [f"answer{i}"], "id": i, "prop": "occupation", "ctxs": []}
        for i in range(count)
    ]
    return str(write_jsonl(tmp_path / "popqa.jsonl", rows))


def batches_of_a_run(
    tmp_path,
    name: str,
    system: str,
    examples: int,
    batch: int,
    inflight: int,
    engine_seconds: float = 0.0,
    search_seconds: float | None = None,
    per_request: float = 0.0,
) -> list[list[str]]:
    """The prompts of each batch the model engine computed, in order."""
    llm = ScriptedLLM(echo)
    searching = (
        {"retriever": "four_at_a_time", "retriever_args": {"seconds": search_seconds}}
        if search_seconds is not None
        else {}
    )
    run = run_eval(
        "popqa",
        system,
        llm,
        data=popqa(tmp_path, examples),
        model_args={"batch_size": batch, "overhead": engine_seconds, "per_request": per_request},
        max_inflight=inflight,
        output=tmp_path / name,
        bootstrap_iters=0,
        registry=registry(),
        **searching,
    )
    assert run.results["counts"]["popqa"]["scored"] == examples
    return batches(llm)


def test_a_model_batch_is_made_once_no_example_waits_on_a_search(tmp_path):
    """64 examples search (four queries a search), then ask: one batch of 64 questions, not a batch of the first
    four that a search answered while the others still waited on theirs."""
    made = batches_of_a_run(tmp_path, "run", "search_then_ask", 64, 64, 64, search_seconds=0.0)
    assert len(made[0]) == 64, [len(b) for b in made]


@pytest.mark.parametrize("engine_seconds, search_seconds", [(0.01, 0.0), (0.0, 0.01), (0.01, 0.01)])
def test_the_batches_do_not_depend_on_how_fast_the_engine_and_the_retriever_answer(
    tmp_path, engine_seconds, search_seconds
):
    fast = batches_of_a_run(tmp_path, "fast", "search_then_ask", 48, 16, 40, search_seconds=0.0)
    slow = batches_of_a_run(
        tmp_path,
        "slow",
        "search_then_ask",
        48,
        16,
        40,
        engine_seconds=engine_seconds,
        search_seconds=search_seconds,
    )
    assert slow == fast


def test_a_small_batch_waits_for_the_answered_examples_unless_the_engine_says_it_is_worth_its_cost(tmp_path):
    """12 examples ask twice, batches of 10: once the first batch has computed, 2 first calls are queued. By
    default (half the limit) they wait for the 10 answered examples' second calls to fill a batch; an engine
    whose batch cost is all per request (the scripted engine's `per_request`, no `overhead`) gets them sent at
    once, while those 10 examples ask again."""
    waiting = batches_of_a_run(tmp_path, "waiting", "ask_twice", 12, 10, 12)
    early = batches_of_a_run(tmp_path, "early", "ask_twice", 12, 10, 12, per_request=1e-6)
    assert [len(b) for b in waiting] == [10, 10, 4]
    assert [len(b) for b in early] == [10, 2, 10, 2]
    assert sorted(map(sorted, early)) != sorted(map(sorted, waiting))


@pytest.mark.parametrize(
    "overhead, per_request, batch, early",
    [(0.05, 0.002, 256, 25), (0.0, 0.001, 16, 1), (1.0, 0.001, 16, 16), (0.05, 0.0, 16, None), (1.0, 5e-324, 16, 16)],
)
def test_the_scripted_engine_sends_an_early_batch_once_its_requests_cost_as_much_as_the_batch(
    overhead, per_request, batch, early
):
    engine = load_engine("scripted:echo", overhead=overhead, per_request=per_request, batch_size=batch)
    assert engine.early_batch == early

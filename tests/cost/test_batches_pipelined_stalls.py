"""The next batch is computed while the examples the batch before answered still work, and no batch waits on them:
the one promise of tests/cost/test_batches_pipelined.py that only the run's count of stalls (ragbench._in_flight's
`ExamplesInFlight.stalls`, not in any result) tells from a batch that was merely late; and, of
tests/components/test_nli.py, an example waiting on another's NLI decision says so (no stall either)."""

from __future__ import annotations

import asyncio
import threading

from conftest import write_jsonl
from ragbench._in_flight import ExamplesInFlight
from ragbench._run import services
from ragbench.api import Metric, MetricDeclaration, Prediction, System
from ragbench.testing import ScriptedLLM, run_eval

SECOND_STARTED = threading.Event()  # set once the model is given its second batch


class AskTwiceOnceTheSecondBatchStarted(System):
    """Two calls in a row, the second only once the model's second batch has started."""

    name = "ask_twice_late"

    async def run(self, example, ctx):
        answer = (await ctx.llm.generate(f"{example.question} call 0")).text
        await asyncio.to_thread(SECOND_STARTED.wait, 60)
        answer = (await ctx.llm.generate(f"{example.question} call 1: {answer[-4:]}")).text
        return Prediction(example_id=example.id, answer=answer)


def watched_runs(monkeypatch) -> list[ExamplesInFlight]:
    """The examples in flight of each run made from now on (their `stalls`)."""
    made: list[ExamplesInFlight] = []

    class Watched(ExamplesInFlight):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(services, "ExamplesInFlight", Watched)
    return made


def test_the_next_batch_starts_before_the_examples_of_the_one_before_have_their_answers(tmp_path, monkeypatch):
    """With two batches' worth of examples in flight, the second batch starts while the first batch's examples
    have not yet asked again: they ask only once it has started (they wait for it, working), and no batch waits
    for them (a stall: the scheduler would have waited STALL_SECONDS for examples that work)."""
    SECOND_STARTED.clear()
    stalls = watched_runs(monkeypatch)

    def echo(request) -> str:
        if len(llm.batch_sizes) == 2:
            SECOND_STARTED.set()
        return request.prompt.rsplit("\n", 1)[-1]

    llm = ScriptedLLM(echo, batch_size=8)
    rows = [
        {"question": f"Who is person {i}?", "answers": [f"answer{i}"], "id": i, "prop": "occupation", "ctxs": []}
        for i in range(16)
    ]
    run = run_eval(
        "popqa",
        AskTwiceOnceTheSecondBatchStarted,
        llm,
        data=write_jsonl(tmp_path / "popqa.jsonl", rows),
        max_inflight=16,
        bootstrap_iters=0,
    )
    assert run.results["counts"]["popqa"]["scored"] == 16 and run.results["cost"]["batches"] == 4
    assert llm.batch_sizes == [8, 8, 8, 8] and [examples.stalls for examples in stalls] == [0]


class SharedThenOwn(Metric):
    """Asks the NLI judge a pair every example asks, then one of the example's own."""

    name = "shared_then_own"
    declares = MetricDeclaration(needs=("nli",), value_range=(0, 1))

    async def score(self, example, prediction, ctx):
        return min(await ctx.nli.entails("p", "shared"), await ctx.nli.entails("p", example.question))


def test_examples_that_share_an_nli_decision_wait_on_it_and_the_batch_is_made_at_once(tmp_path, monkeypatch):
    """Two examples scored at once ask the same pair: the second awaits the first's decision, and says so
    (`waiting_for`), so the batch waiting for every example to ask is made without waiting out the
    scheduler's stall guard (the guard used: a run of LLatrieval over a BM25 index hung before it)."""
    runs = watched_runs(monkeypatch)
    rows = [{"question": q, "answers": ["x"], "id": q, "prop": "occupation", "ctxs": []} for q in "ab"]
    nli = ScriptedLLM("1")
    run = run_eval(
        "demo",
        "closed_book",
        ScriptedLLM("x"),
        metrics=[SharedThenOwn],
        nli=nli,
        data=write_jsonl(tmp_path / "two.jsonl", rows),
        bootstrap_iters=0,
    )
    assert [sample.scores for sample in run.samples["demo"]] == [{"shared_then_own": 1}] * 2
    assert nli.batch_sizes == [1, 2] and [examples.stalls for examples in runs] == [0]

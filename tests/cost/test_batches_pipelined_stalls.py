"""The next batch is computed while the examples the batch before answered still work, and no batch waits on them:
the one promise of tests/cost/test_batches_pipelined.py that only the run's count of stalls (ragbench._in_flight's
`ExamplesInFlight.stalls`, not in any result) tells from a batch that was merely late."""

from __future__ import annotations

import asyncio
import threading

from conftest import write_jsonl
from ragbench._in_flight import ExamplesInFlight
from ragbench._run import services
from ragbench.api import Prediction, System
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


def test_the_next_batch_starts_before_the_examples_of_the_one_before_have_their_answers(tmp_path, monkeypatch):
    """With two batches' worth of examples in flight, the second batch starts while the first batch's examples
    have not yet asked again: they ask only once it has started (they wait for it, working), and no batch waits
    for them (a stall: the scheduler would have waited STALL_SECONDS for examples that work)."""
    SECOND_STARTED.clear()
    stalls: list[ExamplesInFlight] = []

    def echo(request) -> str:
        if len(llm.batch_sizes) == 2:
            SECOND_STARTED.set()
        return request.prompt.rsplit("\n", 1)[-1]

    class Watched(ExamplesInFlight):
        def __init__(self) -> None:
            super().__init__()
            stalls.append(self)

    llm = ScriptedLLM(echo, batch_size=8)
    monkeypatch.setattr(services, "ExamplesInFlight", Watched)
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

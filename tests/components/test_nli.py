"""The NLI component: request formats, one computation per distinct pair, batching through the
scheduler, the TRUE model on the hf engine (seq2seq) against eval.py's own call."""

from __future__ import annotations

import asyncio
import json

import pytest

from ragbench._engines.scripted import ScriptedEngine
from ragbench._llm import LLM
from ragbench._nli import NLI, PROMPT_TEMPLATE, TrueFormat
from ragbench._scheduler import Scheduler
from ragbench.api.engines import Request, Response
from support.tiny_models import tiny_t5


def nli_with(script, fmt="true", log=None, batch_size=16):
    engine = ScriptedEngine("test", script=script, batch_size=batch_size)
    return NLI(LLM(Scheduler(), engine), fmt, log), engine


def test_true_format_prompt_and_exact_one_rule():
    seen = []

    def script(request):
        seen.append(request.prompt)
        return {"p1": "1", "p2": " 1", "p3": "1.0"}[request.prompt.split()[1]]

    nli, _ = nli_with(script)

    async def ask():
        return [await nli.entails(p, "h") for p in ("p1", "p2", "p3")]

    assert asyncio.run(ask()) == [1, 0, 0]  # only exactly "1" entails, as eval.py
    assert seen[0] == "premise: p1 hypothesis: h"


def test_prompt_format_reads_yes_and_counts_unparsed_replies():
    replies = {"a": "Yes.", "b": "no", "c": "Maybe"}
    nli, _ = nli_with(lambda r: replies[r.messages[-1][1].split("\n")[0].split()[-1]], fmt="prompt")

    async def ask():
        return [await nli.entails(p, "h") for p in "abc"]

    assert asyncio.run(ask()) == [1, 0, 0]
    assert nli.stats.unparsed == 1
    assert PROMPT_TEMPLATE.format(premise="P", hypothesis="H").startswith("Premise: P\n\nHypothesis: H\n\n")


def test_identical_pairs_are_computed_once_and_all_pairs_are_batched():
    nli, engine = nli_with(lambda r: "1", batch_size=64)

    async def ask():
        pairs = [(f"p{i % 10}", "h") for i in range(50)]
        return await asyncio.gather(*(nli.entails(p, h) for p, h in pairs))

    assert asyncio.run(ask()) == [1] * 50
    assert (nli.stats.requests, nli.stats.computed) == (50, 10)
    assert engine.batch_sizes == [10]


def test_decisions_are_logged_as_a_replay_file(tmp_path):
    from ragbench._engines.replay import ReplayEngine

    log = tmp_path / "nli.jsonl"
    nli, _ = nli_with(lambda r: "1" if "yes" in r.prompt else "0", log=log)

    async def ask():
        return [await nli.entails("yes doc", "h"), await nli.entails("other doc", "h")]

    assert asyncio.run(ask()) == [1, 0]
    nli.close()
    sampling = Request(prompt="x", sampling=TrueFormat.sampling).to_dict()["sampling"]
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        {"prompt": "premise: yes doc hypothesis: h", "sampling": sampling, "response": "1"},
        {"prompt": "premise: other doc hypothesis: h", "sampling": sampling, "response": "0"},
    ]
    replayed = NLI(LLM(Scheduler(), ReplayEngine(str(log))))
    assert asyncio.run(replayed.entails("yes doc", "h")) == 1


def test_a_failed_call_is_raised_and_retried_by_the_next_asker():
    calls = []

    def script(request):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("down")
        return Response(texts=["1"])

    nli, _ = nli_with(script)

    async def ask_twice():
        with pytest.raises(Exception, match="down"):
            await nli.entails("p", "h")
        return await nli.entails("p", "h")

    assert asyncio.run(ask_twice()) == 1


def test_unknown_format_is_a_config_error():
    from ragbench.api import ConfigError

    with pytest.raises(ConfigError, match="--nli-format"):
        nli_with(lambda r: "1", fmt="xnli")


@pytest.fixture(scope="module")
def t5_folder(tmp_path_factory):
    return tiny_t5(tmp_path_factory.mktemp("t5"))


def test_hf_engine_runs_seq2seq_nli_like_eval_py(t5_folder):
    """eval.py `_run_nli_autoais` (tokenize, generate(max_new_tokens=10), decode skipping special
    tokens), one request at a time, against the hf engine's batched NLI requests."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from ragbench._engines.hf.engine import HFEngine

    tokenizer = AutoTokenizer.from_pretrained(t5_folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(t5_folder).eval()
    pairs = [
        ("the rain in india", "rain is in india"),
        ("food", "the city of food loans answer"),
        ("record month", "1"),
        ("a place on earth is colombia", "yes"),
    ]
    expected = []
    for premise, hypothesis in pairs:
        input_ids = tokenizer(f"premise: {premise} hypothesis: {hypothesis}", return_tensors="pt").input_ids
        with torch.inference_mode():
            outputs = model.generate(input_ids, max_new_tokens=10)
        expected.append(tokenizer.decode(outputs[0], skip_special_tokens=True))

    engine = HFEngine(str(t5_folder), batch_size=4)
    assert engine.seq2seq
    nli = NLI(LLM(Scheduler(), engine), "true")

    async def ask():
        return await asyncio.gather(*(nli.llm.send(nli.format.request(p, h)) for p, h in pairs))

    assert [response.text for response in asyncio.run(ask())] == expected


def test_examples_that_share_a_decision_wait_on_it_and_the_batch_is_made_at_once():
    """Two examples in flight ask the same pair: the second awaits the first's decision, and says so
    (`waiting_for`), so the batch waiting for every example to ask is made without waiting out the
    scheduler's stall guard (the guard used: a run of LLatrieval over a BM25 index hung before it)."""
    from ragbench._in_flight import ExamplesInFlight

    examples = ExamplesInFlight()
    engine = ScriptedEngine("test", script=lambda request: "1", batch_size=16)
    scheduler = Scheduler(examples=examples)
    nli = NLI(LLM(scheduler, engine), "true")

    async def example(hypothesis):
        with examples.slot():
            return [await nli.entails("p", "shared"), await nli.entails("p", hypothesis)]

    async def both():
        try:
            return await asyncio.gather(example("a"), example("b"))
        finally:
            await scheduler.close()

    assert asyncio.run(both()) == [[1, 1], [1, 1]]
    assert examples.stalls == 0 and engine.batch_sizes == [1, 2]

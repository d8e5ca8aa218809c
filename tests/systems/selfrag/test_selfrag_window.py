"""Sampling.logprob_window (Self-RAG's logprob_window=upstream) on each engine that reports it, the
engines that cannot give upstream's windows refused before the run, and what happens where upstream
crashes on a token outside its dict (KeyError in the retrieval decision)."""

from __future__ import annotations

import asyncio
import json
import sys
import types
from pathlib import Path

import pytest
from test_engine_vllm import NAMED, CompletionOutput, FakeLLM, Logprob, RequestOutput, fake_vllm  # noqa: F401

from ragbench.api import ConfigError, Task
from ragbench.api.engines import Engine, Request, Sampling
from ragbench.plugins.selfrag.scoring import SHORT_DECISION_WINDOW, SHORT_PASSAGE_WINDOW
from ragbench.plugins.selfrag.system import SelfRag
from ragbench.tasks.selfrag.demo import Demo
from ragbench.testing import ReplayLLM, installed_registry, load_engine, make_context

PROMPT = "### Instruction:\nq\n\n### Response:\n"


def replay_file(tmp_path, *records) -> Path:
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def replay(tmp_path, *records) -> Engine:
    return load_engine(f"replay:{replay_file(tmp_path, *records)}")


def named(engine, window, prompt=PROMPT, names=("[Retrieval]", "[No Retrieval]")):
    sampling = Sampling(max_tokens=2, logprob_tokens=names, logprob_window=window)
    return [p.named for p in engine.generate([Request(prompt=prompt, sampling=sampling)])[0].logprobs]


DECISION = {
    "prompt": PROMPT,
    "response": "x y",
    "tokens": ["x", " y"],
    "logprobs": [
        {"x": -0.1, "[Retrieval]": -2.0, "[No Retrieval]": -9.0},
        {" y": -0.2, "[Retrieval]": -3.0, "[No Retrieval]": -4.0},
    ],
    "ranks": [{"[Retrieval]": 3, "[No Retrieval]": 40000}, {"[Retrieval]": 7000, "[No Retrieval]": 9}],
}


def test_replay_reports_a_named_token_only_inside_the_window(tmp_path):
    engine = replay(tmp_path, DECISION)
    assert named(engine, None) == [
        {"[Retrieval]": -2.0, "[No Retrieval]": -9.0},
        {"[Retrieval]": -3.0, "[No Retrieval]": -4.0},
    ]
    assert named(engine, SHORT_DECISION_WINDOW) == [
        {"[Retrieval]": -2.0},
        {"[Retrieval]": -3.0, "[No Retrieval]": -4.0},
    ]
    assert named(engine, SHORT_PASSAGE_WINDOW) == [{"[Retrieval]": -2.0}, {"[No Retrieval]": -4.0}]
    assert named(engine, 3) == [{}, {}]


def test_replay_without_ranks_counts_the_recorded_entries_above_and_keeps_the_generated_token(tmp_path):
    record = {
        "prompt": PROMPT,
        "response": "[Retrieval]",
        "tokens": ["[Retrieval]", "x"],
        "logprobs": [{"[Retrieval]": -3.0, "a": -1.0, "b": -2.0, "[No Retrieval]": -2.5}, {"x": -0.1}],
    }
    engine = replay(tmp_path, record)
    assert named(engine, 2) == [{"[Retrieval]": -3.0}, {}]  # generated: shown though two entries outrank it
    assert named(engine, 3)[0] == {"[Retrieval]": -3.0, "[No Retrieval]": -2.5}
    assert named(engine, None)[1] == {}  # absent from the dict: absent in every mode


def test_a_malformed_ranks_field_is_a_one_line_config_error(tmp_path):
    with pytest.raises(ConfigError, match='"ranks" is not a list, as long as "tokens", of objects of ranks'):
        replay(tmp_path, {**DECISION, "ranks": [{}]})


class Popqa(Task):
    name = "popqa_like"


def decide(tmp_path, window: str) -> tuple[bool, float]:
    system = SelfRag(mode="adaptive_retrieval", threshold=0.2, logprob_window=window)
    trace: dict = {}

    ctx = make_context(Popqa, ReplayLLM(replay_file(tmp_path, DECISION)))
    return asyncio.run(system.decide_retrieval(ctx, PROMPT, trace)), trace["retrieval_ratio"]


def test_decision_with_a_token_outside_the_window_reads_minus_100_where_upstream_raises_keyerror(tmp_path):
    """[No Retrieval] is outside the top-32,016 at position 0: upstream sets it to -100 and then reads it
    anyway (KeyError); here it stays -100, as the adapted upstream run does."""
    retrieve, ratio = decide(tmp_path, "upstream")
    assert ratio == pytest.approx(-2.0 / (-2.0 - 100.0)) and retrieve is False
    retrieve, ratio = decide(tmp_path, "exact")
    assert ratio == pytest.approx(-2.0 / (-2.0 - 9.0)) and retrieve is False
    assert pytest.approx(0.1818, abs=1e-4) == ratio


def test_an_unknown_window_is_a_one_line_config_error():
    with pytest.raises(ConfigError, match="logprob_window='top5000' is not one of upstream, exact"):
        SelfRag(logprob_window="top5000")


def test_engines_that_cannot_give_upstreams_windows_are_told_before_they_start(monkeypatch):
    OpenAIEngine = installed_registry().load(
        "engines", "openai"
    )  # the classes `--model openai:...` and `vllm:...` make
    VLLMEngine = installed_registry().load("engines", "vllm")

    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(SamplingParams=lambda **kwargs: None))
    upstream, exact = [SelfRag().engine_needs(Demo())], [SelfRag(logprob_window="exact").engine_needs(Demo())]
    [problem] = OpenAIEngine.meet_needs("m", {}, upstream)[1]
    assert problem.endswith("at most the top 20 per position; pass --system-arg logprob_window=exact")
    assert OpenAIEngine.meet_needs("m", {}, exact) == ({}, [])
    assert VLLMEngine.meet_needs("m", {}, upstream) == ({"max_logprobs": -1}, [])  # set when the engine starts
    [problem] = VLLMEngine.meet_needs("m", {"max_logprobs": 5000}, upstream)[1]
    assert "give max_logprobs >= 32016 or -1" in problem
    assert VLLMEngine.meet_needs("m", {"max_logprobs": 32016}, upstream) == ({"max_logprobs": 32016}, [])
    assert VLLMEngine.meet_needs("m", {"max_logprobs": 5}, exact) == ({"max_logprobs": 5}, [])


def test_the_system_asks_upstreams_windows_or_none():
    assert SelfRag().sampling(SHORT_PASSAGE_WINDOW)["logprob_window"] == 5000
    assert "logprob_window" not in SelfRag(logprob_window="exact").sampling(SHORT_PASSAGE_WINDOW)


@pytest.mark.model
def test_hf_reports_a_named_token_only_within_the_top_k_of_its_position():

    candidates = ("<|im_end|>", "<|im_start|>", "Paris", "ĠParis", "the", "Ġthe", "The", "ĠThe", "Ġcapital", "Ġis")
    engine = load_engine("hf:embedded")
    try:
        names = tuple(n for n in candidates if n not in engine.missing_tokens(candidates))
        assert len(names) >= 5

        def ask(window):
            request = Request.chat(
                [{"role": "user", "content": "What is the capital of France?"}],
                Sampling(max_tokens=5, logprobs=40, logprob_tokens=names, logprob_window=window),
            )
            return engine.generate([request])[0].logprobs

        exact, windowed = ask(None), ask(40)
    finally:
        engine.close()
    assert all(set(p.named) == set(names) for p in exact)
    shown = 0
    for full, cut in zip(exact, windowed):
        top40 = set(full.top)  # the 40 most likely pieces at this position (decoded: "Ġ" is a space)
        assert set(cut.named) == {n for n in names if n.replace("Ġ", " ") in top40 or n.replace("Ġ", " ") == full.token}
        assert all(cut.named[n] == full.named[n] for n in cut.named)
        shown += len(cut.named)
    assert 0 < shown < len(names) * len(exact)  # some inside, some outside


def test_vllm_reads_named_tokens_from_its_own_top_k_dict(fake_vllm, monkeypatch):
    """logprob_window=k asks vLLM for logprobs=k (needs max_logprobs >= k; vLLM's default is 20) and
    reports a named token where that dict holds it within rank k (vLLM adds the sampled token, whatever its rank)."""
    from ragbench.api import EngineError

    relevant, irrelevant = NAMED["[Relevant]"], NAMED["[Irrelevant]"]

    def answer(prompt, params):
        entries = [
            {ord("a"): Logprob(-0.1, 1, "a"), relevant: Logprob(-2.0, 2, "[Relevant]")},  # inside
            {ord("b"): Logprob(-0.2, 1, "b")},  # both outside the top-k
            {irrelevant: Logprob(-6.0, 3000, "[Irrelevant]"), ord("c"): Logprob(-0.3, 1, "c")},
        ]
        return RequestOutput(
            "p", [1], [CompletionOutput(0, "ab[Irrelevant]", [ord("a"), ord("b"), irrelevant], entries, "length")]
        )

    monkeypatch.setattr(FakeLLM, "answer", staticmethod(answer))

    def ask(engine, window):
        names = ("[Relevant]", "[Irrelevant]")
        return engine.generate(
            [Request(prompt="p", sampling=Sampling(max_tokens=3, logprob_tokens=names, logprob_window=window))]
        )[0]

    refused = ask(load_engine("vllm:/m"), 30)
    assert isinstance(refused, EngineError) and "max_logprobs=-1 (or >= 30)" in str(refused)
    out = ask(load_engine("vllm:/m"), 2)
    params = FakeLLM.instances[-1].calls[-1]["params"][0].kwargs
    assert params["logprobs"] == 2 and "logprob_token_ids" not in params
    assert [p.named for p in out.logprobs] == [{"[Relevant]": -2.0}, {}, {"[Irrelevant]": -6.0}]


def test_an_empty_chosen_answer_stays_empty_scores_0_and_the_run_goes_on(tmp_path):
    """Upstream's main() crashes on an empty chosen answer (`pred[0]`: IndexError). Here the empty
    text is the prediction, `match` and `selfrag_match` score it 0, and the run goes on."""
    from ragbench.plugins.selfrag.prompts import evidence_prompt
    from support.helpers import run, samples

    rows, records = [], []
    for n, question in enumerate(("Who is A?", "Who is B?")):
        docs = [{"id": f"{n}-0", "title": "T0", "text": "zero"}, {"id": f"{n}-1", "title": "T1", "text": "one"}]
        rows.append({"question": question, "answers": ["a"], "ctxs": docs})
        prompt = f"### Instruction:\n{question}\n\n### Response:\n"
        # passage 0: nothing generated (relevance 0.5 from two -100s, exp(seq score 0) = 1): score 1.5
        records.append({"prompt": evidence_prompt(prompt, "T0", "zero"), "response": "", "tokens": [], "logprobs": []})
        text = " a" if n else " x"  # passage 1: an unlikely, irrelevant answer scoring less
        records.append(
            {
                "prompt": evidence_prompt(prompt, "T1", "one"),
                "response": text,
                "tokens": [text],
                "logprobs": [{text: -5.0, "[Irrelevant]": -0.1, "[Relevant]": -9.0}],
            }
        )
    data, calls = tmp_path / "popqa.jsonl", tmp_path / "calls.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    calls.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    results = run(
        tmp_path,
        tasks=["popqa"],
        system="selfrag",
        model=f"replay:{calls}",
        data={"popqa": str(data)},
        system_args={"mode": "always_retrieve", "ndocs": 2, "max_new_tokens": 5},
        metrics=["match", "selfrag_match"],
    )
    assert results["complete"] and results["counts"]["popqa"]["scored"] == 2
    out = samples(tmp_path / "run", "popqa")
    assert [s["prediction"]["answer"] for s in out] == ["", ""]
    assert [s["prediction"]["extras"]["selfrag"]["best_passage"] for s in out] == [0, 0]
    assert all(s["scores"]["match"] == 0.0 and s["scores"]["selfrag_match"] == 0.0 for s in out)

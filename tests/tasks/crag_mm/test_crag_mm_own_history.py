"""crag_mm_multi with `history=own` (upstream's): the run answers a conversation's turns in order, each turn asked
with the system's own earlier answers (cut to 75 tokens); a resume reads the saved answers back; a failed turn
leaves the later ones of its conversation not asked, counted; `history=gold` runs keep their recorded hashes and prompts."""

from __future__ import annotations

import os
import signal

import pytest

from ragbench.tasks.crag_mm.synthetic import write_dataset
from ragbench.testing import RunInterrupted, ScriptedLLM, run_eval
from support.crag_mm_helpers import png, tokenizer_dir
from support.helpers import samples

QUESTIONS = {"c1": ["what is this?", "how old is it?", "who made it?"], "c2": ["what car?", "how fast?"]}
GOLD = {"c1": ["A vase.", "100 years.", "Ming."], "c2": ["A Mini.", "200 km/h."]}
# what a history=gold run of this data recorded before `history=own` existed (main at a7dffb4b)
GOLD_DIGESTS = {
    "c1-0": "6658e5d514a945eb8346c10b7916ee4a2911f2b37a2f9ced5996f97ca492dc5d",
    "c1-1": "b55f502ad28a59dc5c242f2f0515e4c1c4a2a92d8f04c0e9323eee4188e46c67",
    "c1-2": "7fad93a13f6b69db85e0bf6b30400219fe31365caab7918ea6afdf326990461d",
    "c2-0": "d643caeffb0772c574afc22e064c922ffe9425a885a98b3fd01c592c34c97254",
    "c2-1": "a4837df9a63997e080c6d303e63a9eb02a78203be305b485188ffc30b66177f9",
}
GOLD_DATA_SHA256 = "66c92505b98b5616f2e5079b4353363c036e8f25e07f2c10b6eccde576d8c855"
OWN = {"what is this?": "a teapot", "how old is it?": "x" * 200, "what car?": "A Mini.", "how fast?": "fast"}


def dataset(tmp_path):
    if (tmp_path / "data").exists():
        return tmp_path / "data"
    rows = []
    for number, (session, questions) in enumerate(QUESTIONS.items()):
        turns = [
            {"interaction_id": f"{session}-{i}", "domain": 0, "query_category": 0, "dynamism": 0, "query": q}
            | {"image_quality": 0}
            for i, q in enumerate(questions)
        ]
        answers = [{"interaction_id": t["interaction_id"], "ans_full": a} for t, a in zip(turns, GOLD[session])]
        image = {"bytes": png((number, 9, 9)), "path": None}
        rows.append({"session_id": session, "image": image, "image_url": None, "turns": turns, "answers": answers})
    return write_dataset(tmp_path / "data", rows)


def history(request) -> list[tuple[str, str]]:
    """The (role, text) turns between the <conversation_history> tags of a request (the open agent's layout)."""
    texts = [tuple(m) for m in request.messages if isinstance(m, tuple)]  # the image turn is a Message
    opened = texts.index(("user", "<conversation_history>")) if ("user", "<conversation_history>") in texts else -1
    return [] if opened < 0 else texts[opened + 1 : texts.index(("user", "</conversation_history>"))]


def answer(request) -> str:
    question = request.messages[-1][1]
    return "Ming." if question == "who made it?" else OWN[question]


def run(tmp_path, system, history_arg="own", **options):
    return run_eval(
        "crag_mm_multi",
        "closed_book",
        system,
        data=dataset(tmp_path),
        judges=[ScriptedLLM("Result: WRONG")],
        task_args={"tokenizer": tokenizer_dir(), "history": history_arg},
        **options,
    )


def test_each_turn_is_asked_with_the_systems_own_earlier_answers_cut_to_75_tokens(tmp_path):
    system = ScriptedLLM(answer)
    result = run(tmp_path, system, output=tmp_path / "run", max_inflight=4)
    asked = {request.messages[-1][1]: history(request) for request in system.requests}
    cut = "x" * 74  # the stand-in tokenizer: one token a byte, after the BOS
    assert asked["what is this?"] == [] and asked["what car?"] == []
    assert asked["who made it?"] == [
        ("user", "what is this?"),
        ("assistant", "a teapot"),
        ("user", "how old is it?"),
        ("assistant", cut),
    ]
    assert asked["how fast?"] == [("user", "what car?"), ("assistant", "A Mini.")]
    saved = {s["id"]: s for s in samples(tmp_path / "run", "crag_mm_multi")}
    assert saved["c1-2"]["turns"][3] == {"role": "assistant", "content": cut}  # the record shows what was asked
    assert result.results["config"]["task_configs"]["crag_mm_multi"]["history"] == "own"


def comparable_samples(run_dir) -> list[dict]:
    """The samples in data order, without what differs between two runs of one configuration: the time taken and
    whether a call was answered from the cache."""

    def steps(trace: list[dict]) -> list[dict]:
        return [{k: v for k, v in step.items() if k not in ("seconds", "cached")} for step in trace]

    return sorted(
        (
            {k: steps(v) if k in ("trace", "judge_trace") else v for k, v in s.items() if k != "seconds"}
            for s in samples(run_dir, "crag_mm_multi")
        ),
        key=lambda s: s["index"],
    )


def test_a_run_stopped_mid_conversation_resumes_to_the_samples_of_an_uninterrupted_one(tmp_path):
    """A real SIGINT while turn 2 of c1 is asked: turns 0 and 1 are saved, and the resume asks only what is
    left, reading their answers back from the samples (not asked again)."""
    run(tmp_path, ScriptedLLM(answer), output=tmp_path / "whole", max_inflight=1)
    stopped = {"done": False}

    def stopping(request) -> str:
        if request.messages[-1][1] == "who made it?" and not stopped["done"]:
            stopped["done"] = True
            os.kill(os.getpid(), signal.SIGINT)
        return answer(request)

    with pytest.raises(RunInterrupted):
        run(tmp_path, ScriptedLLM(stopping), output=tmp_path / "run", max_inflight=1)
    assert {s["id"] for s in samples(tmp_path / "run", "crag_mm_multi")} == {"c1-0", "c1-1"}
    again = ScriptedLLM(answer)
    run(tmp_path, again, output=tmp_path / "run", max_inflight=1, resume=True)
    asked = [r.messages[-1][1] for r in again.requests]
    assert "what is this?" not in asked and "how old is it?" not in asked
    turns = {s["id"]: s.get("turns") for s in samples(tmp_path / "run", "crag_mm_multi")}
    assert turns["c1-2"][1::2] == [{"role": "assistant", "content": a} for a in ("a teapot", "x" * 74)]  # read back
    assert comparable_samples(tmp_path / "run") == comparable_samples(tmp_path / "whole")


def test_a_failed_turn_leaves_the_later_turns_of_its_conversation_not_asked_and_counted(tmp_path):
    def failing(request) -> str:
        if request.messages[-1][1] == "how old is it?":
            raise ValueError("boom")
        return answer(request)

    system = ScriptedLLM(failing)
    result = run(tmp_path, system, output=tmp_path / "run")
    assert "who made it?" not in [r.messages[-1][1] for r in system.requests]
    saved = {s["id"]: s for s in samples(tmp_path / "run", "crag_mm_multi")}
    assert saved["c1-2"]["error"] == (
        "not asked: example 'c1-1' of its sequence failed (--resume asks it again, then those after it)"
    )
    assert saved["c2-1"]["error"] is None
    assert result.results["counts"]["crag_mm_multi"]["failed"] == 2


def test_a_gold_history_run_keeps_its_hashes_and_prompts(tmp_path):
    """history=gold (the default) keeps the examples' digests, data hash and prompts recorded here (those of a run
    with no history option, on this data)."""
    system = ScriptedLLM(answer)
    result = run(tmp_path, system, history_arg="gold", output=tmp_path / "run")
    saved = {s["id"]: s["example_sha256"] for s in samples(tmp_path / "run", "crag_mm_multi")}
    asked = {request.messages[-1][1]: history(request) for request in system.requests}
    assert asked["how fast?"] == [("user", "what car?"), ("assistant", "A Mini.")]
    assert asked["who made it?"][3] == ("assistant", "100 years.")
    assert saved == GOLD_DIGESTS
    assert result.results["data_sha256"]["crag_mm_multi"] == GOLD_DATA_SHA256

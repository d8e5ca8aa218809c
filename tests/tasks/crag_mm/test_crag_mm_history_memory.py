"""A long crag_mm_multi conversation takes memory linear in its turns (issue 97): each turn's example views the
turns before it (`History` of one `Conversation`) instead of copying them, reads, compares and hashes as the list it
stands for (the prompts, digests and samples are those of the copies), and hands plugins read-only turns."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench.api import Conversation, History
from ragbench.tasks.crag_mm.synthetic import write_dataset
from ragbench.tasks.crag_mm.task import CragMMMulti
from ragbench.testing import ScriptedLLM, run_eval, sample_lines
from support.crag_mm_helpers import png, tokenizer_dir


def conversation_data(folder, turns: int):
    """One conversation of `turns` turns (each turn's history holds every earlier question and gold answer)."""
    rows = [
        {
            "session_id": "s",
            "image": {"bytes": png((1, 2, 3), (4, 4)), "path": None},
            "image_url": None,
            "turns": [
                {"interaction_id": f"t-{i}", "domain": 0, "query_category": 0, "dynamism": 0, "image_quality": 0}
                | {"query": question(i)}
                for i in range(turns)
            ],
            "answers": [{"interaction_id": f"t-{i}", "ans_full": answer(i)} for i in range(turns)],
        }
    ]
    return write_dataset(folder / str(turns), rows)


def question(i: int) -> str:
    return f"what is part {i} of it?"


def answer(i: int) -> str:
    return f"part {i} is an answer"


def conversation_turns(i: int) -> list[dict[str, str]]:
    """Turn i of `conversation_data` as a history holds it: its question and gold answer."""
    return [{"role": "user", "content": question(i)}, {"role": "assistant", "content": answer(i)}]


def examples_peak(folder, turns: int) -> int:
    """Bytes at the peak of reading the conversation's examples, all held at once (tracemalloc: Python's own
    allocations, the same on any machine)."""
    data = conversation_data(folder, turns)
    task = CragMMMulti(str(data), tokenizer=tokenizer_dir())
    task.prepare()
    tracemalloc.start()
    try:
        examples = list(task.examples())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(examples) == turns and len(examples[-1].turns or []) == 2 * (turns - 1)
    return peak


def test_a_conversations_examples_take_memory_linear_in_its_turns(tmp_path):
    """From 2,000 to 4,000 turns the peak grows under 3 times what it grew from 1,000 to 2,000 (linear: 2 times;
    each example copying its history, quadratic: 4 times; 17, 42 and 138 MB were measured before, 10, 12 and 16
    MB after, docs/benchmarks/crag-mm.md)."""
    examples_peak(tmp_path, 10)  # what the first reading allocates once (imports, the tokenizer) left out
    small, middle, large = (examples_peak(tmp_path, turns) for turns in (1000, 2000, 4000))
    assert large - middle < 3 * (middle - small), (small, middle, large)


def test_each_turn_sees_the_turns_before_it_read_only(tmp_path):
    task = CragMMMulti(str(conversation_data(tmp_path, 3)), tokenizer=tokenizer_dir())
    task.prepare()
    examples = list(task.examples())
    assert [len(example.turns or []) for example in examples] == [0, 2, 4]
    last = examples[2].turns
    assert isinstance(last, History)
    assert last == [
        {"role": "user", "content": "what is part 0 of it?"},
        {"role": "assistant", "content": "part 0 is an answer"},
        {"role": "user", "content": "what is part 1 of it?"},
        {"role": "assistant", "content": "part 1 is an answer"},
    ]
    assert examples[1].turns == last[:2]  # the earlier turn's view, untouched by the turns added after it
    with pytest.raises(TypeError, match="read-only"):
        last[0]["content"] = "changed"  # would change every later turn's history
    read_only = examples[2].read_only()
    assert read_only.turns == last and read_only.summary()["turns"] == list(last)
    # the prompt of a view is the prompt of a copy, message for message
    copied = dataclasses.replace(examples[2], turns=[dict(turn) for turn in last])
    assert task.prompting.build_prompt(examples[2]) == task.prompting.build_prompt(copied)


turn = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": st.text(max_size=8)})


@given(turns=st.lists(turn, max_size=12), data=st.data())
def test_a_history_is_the_list_of_its_first_turns(turns, data):
    conversation = Conversation()
    views = []
    for item in turns:
        views.append(conversation.history())
        conversation.add(item["role"], item["content"])
    views.append(conversation.history())
    length = data.draw(st.integers(0, len(turns)))
    view, expected = views[length], turns[:length]
    assert view == expected and expected == view and list(view) == expected and len(view) == length
    assert view != [*expected, {"role": "user", "content": "more"}]
    start, stop, step = (data.draw(st.none() | st.integers(-15, 15)) for _ in range(3))
    if step != 0:
        assert view[start:stop:step] == expected[start:stop:step]
    index = data.draw(st.integers(-15, 15))
    if -length <= index < length:
        assert view[index] == expected[index]
    else:
        with pytest.raises(IndexError):
            view[index]
    for copied in (copy.copy(view), copy.deepcopy(view), pickle.loads(pickle.dumps(view))):
        assert type(copied) is list and copied == expected
    assert repr(view) == repr([{"role": t["role"], "content": t["content"]} for t in expected])
    with pytest.raises(TypeError):
        hash(view)


def test_a_long_conversations_samples_read_back_share_its_turns(tmp_path):
    """A run's end reads its samples back and holds the records its corpus metrics score (CRAG-MM's multi-turn
    score is one): each record's history is its own list, but of the turns the reading read once, not a copy of
    them per record (a copy made the records of one 1,000-turn conversation take 650 MB; docs/benchmarks/crag-mm.md).
    tracemalloc's bytes the lines read back take per turn they hold (their prompts and other fields counted in): 185
    where the lines share the turns, 490 where each copied them (a dict and its two strings a turn)."""
    turns = 150
    run_eval(
        "crag_mm_multi",
        "closed_book",
        ScriptedLLM(answer(1)),
        data=str(conversation_data(tmp_path, turns)),
        judges=[ScriptedLLM("Result: WRONG")],
        task_args={"tokenizer": tokenizer_dir()},
        output=tmp_path / "run",
    )
    tracemalloc.start()
    try:
        lines = sample_lines(tmp_path / "run", "crag_mm_multi")
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    held_turns = sum(len(line["turns"]) for line in lines if "turns" in line)
    assert len(lines) == turns and held_turns == turns * (turns - 1)  # two turns (question, answer) before each
    assert lines[-1]["turns"] == [turn for i in range(turns - 1) for turn in conversation_turns(i)]
    assert held / held_turns < 300, (held, held_turns)

"""A conversation's turns are held once per run (issue 97): a sample line names the last turn of its history in
turns/<task>.jsonl instead of copying every earlier turn (into `turns` and into its prompts), and is read back as the
line the run made. The samples of a crag_mm_multi run grow linearly with the conversation's length; a turns file
that lost a sample's turns makes that line one RecordError naming both files."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._storage.sample_files import checked_sample, finalized_samples
from ragbench._storage.shared_turns import TurnsWriter, turns_file
from ragbench.tasks.crag_mm.synthetic import write_dataset
from ragbench.testing import ScriptedLLM, run_eval
from support.crag_mm_helpers import png, tokenizer_dir

texts = st.text(max_size=12)
turn = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": texts})


def sample_line(index: int, turns: list, system: list) -> dict:
    """A sample line whose one LLM call sent `system`, the turns, then the question (as a chat task's prompt)."""
    messages = [*system, *turns, {"role": "user", "content": f"question {index}"}]
    return {
        "schema_version": 2,
        "index": index,
        "id": f"t{index}",
        "question": f"question {index}",
        "gold": {"answers": ["a"]},
        "turns": turns,
        "trace": [{"kind": "llm", "name": "answer", "request": {"messages": messages}, "response": {"texts": ["x"]}}],
    }


@settings(max_examples=60, deadline=None)
@given(
    conversations=st.lists(st.lists(turn, min_size=1, max_size=8), min_size=1, max_size=4),
    system=st.lists(turn, max_size=2),
    seed=st.integers(0, 2**16),
)
def test_each_line_reads_back_as_written_in_any_order_of_writing(tmp_path_factory, conversations, system, seed):
    """Every prefix of each conversation is one example's history (the turns before it), written in a random order
    (a run's examples end in any order): each line read back equals the line given, turns and prompts."""
    folder = tmp_path_factory.mktemp("run")
    samples = folder / "samples" / "task.jsonl"
    samples.parent.mkdir()
    lines = [
        sample_line(number * 100 + length, conversation[:length], system)
        for number, conversation in enumerate(conversations)
        for length in range(len(conversation) + 1)
    ]
    random.Random(seed).shuffle(lines)
    writer = TurnsWriter(turns_file(samples))
    written = [writer.shared(line) for line in lines]
    writer.close()
    for number, (line, stored) in enumerate(zip(lines, written)):
        read = checked_sample(str(samples), number, json.loads(json.dumps(stored)))
        expected = {**line, "schema_version": 3} if line["turns"] else line
        assert read == expected
        assert json.dumps(read["trace"]) == json.dumps(expected["trace"])  # the prompts byte-equal, key order too


def conversation(folder, turns: int):
    """One crag_mm_multi conversation of `turns` turns with long gold answers (each is history to every later one)."""
    rows = [
        {
            "session_id": "s",
            "image": {"bytes": png((1, 2, 3)), "path": None},
            "image_url": None,
            "turns": [
                {"interaction_id": f"t-{i}", "domain": 0, "query_category": 0, "dynamism": 0, "image_quality": 0}
                | {"query": f"what is part {i} of it?"}
                for i in range(turns)
            ],
            "answers": [
                {"interaction_id": f"t-{i}", "ans_full": f"part {i} is " + "a long answer " * 30} for i in range(turns)
            ],
        }
    ]
    return write_dataset(folder / "data", rows)


def run_bytes(tmp_path, turns: int) -> tuple[int, object]:
    folder = tmp_path / str(turns)
    run_eval(
        "crag_mm_multi",
        "closed_book",
        ScriptedLLM("I don't know"),
        data=conversation(folder, turns),
        judges=[ScriptedLLM("Result: WRONG")],
        task_args={"tokenizer": tokenizer_dir()},
        output=folder / "run",
    )
    stored = [folder / "run" / "samples" / "crag_mm_multi.jsonl", folder / "run" / "turns" / "crag_mm_multi.jsonl"]
    return sum(path.stat().st_size for path in stored if path.exists()), folder / "run"


def test_a_conversations_samples_grow_linearly_with_its_length(tmp_path):
    """The samples (and turns file) of a 30-turn conversation are under 2.2 times those of a 15-turn one (each
    sample held its whole history twice: 2.8 times before); each sample reads back with its history and prompt."""
    short, _ = run_bytes(tmp_path, 15)
    long, run = run_bytes(tmp_path, 30)
    assert long < 2.2 * short, (short, long)
    records = list(finalized_samples(run / "samples" / "crag_mm_multi.jsonl"))
    assert [len(record.get("turns") or []) for record in records] == [2 * i for i in range(30)]
    last = records[-1]
    assert last["turns"][-1] == {"role": "assistant", "content": "part 28 is " + "a long answer " * 30}
    messages = last["trace"][0]["request"]["messages"]
    start = messages.index({"role": "user", "content": "<conversation_history>"}) + 1
    assert messages[start : start + 58] == last["turns"]


DEEP = b"[0, " + b"[" * 100_000 + b"]" * 100_000 + b"]"  # a turn nested deeper than Python's parser follows


@pytest.mark.parametrize("damage", ["cut short", "nested too deep"])
def test_a_line_whose_turns_are_gone_is_one_record_error_naming_both_files(tmp_path, damage):
    _, run = run_bytes(tmp_path, 3)
    turns = run / "turns" / "crag_mm_multi.jsonl"
    first, rest = turns.read_bytes().split(b"\n", 1)
    # the first turn left; or the second replaced by a line nested too deep (a RecursionError, not one line)
    turns.write_bytes(first + b"\n" + (DEEP + b"\n" + rest.split(b"\n", 1)[1] if damage == "nested too deep" else b""))
    samples = run / "samples" / "crag_mm_multi.jsonl"
    lines = samples.read_text(encoding="utf-8").splitlines()
    read = [checked_sample(str(samples), number, json.loads(line)) for number, line in enumerate(lines)]
    assert not isinstance(read[0], Exception) and read[0]["id"] == "t-0"  # no history: nothing to read back
    problem = str(read[2])
    assert problem.startswith(f"{samples}:3: ") and str(turns) in problem and "\n" not in problem


def test_a_reading_reads_its_turns_file_once_and_keeps_nothing_after_it(tmp_path, monkeypatch):
    """The turns file is read by the reading that needs it (a `TurnsReader` it owns), once for all its lines and
    again once it changed; no module state keeps a run's turns (an lru_cache did: issue 97)."""
    from ragbench._storage import shared_turns
    from ragbench._storage.sample_files import located_samples
    from ragbench._storage.shared_turns import TurnsReader

    _, run = run_bytes(tmp_path, 4)
    samples = run / "samples" / "crag_mm_multi.jsonl"
    reads = []
    chains = shared_turns._chains
    monkeypatch.setattr(shared_turns, "_chains", lambda path: reads.append(path) or chains(path))
    assert len([located for located in located_samples(samples) if located.value.get("turns")]) == 3
    assert reads == [turns_file(samples)]
    reader = TurnsReader()
    line = json.loads(samples.read_text(encoding="utf-8").splitlines()[-1])
    assert reader.with_turns(line, str(samples), 3)["turns"] == reader.with_turns(line, str(samples), 3)["turns"]
    assert len(reads) == 2
    with turns_file(samples).open("a", encoding="utf-8") as handle:
        handle.write('[-1, {"role": "user", "content": "appended"}]\n')
    assert len(reader.with_turns(line, str(samples), 3)["turns"]) == 6 and len(reads) == 3  # read again
    assert not [name for name, value in vars(shared_turns).items() if hasattr(value, "cache_info")]

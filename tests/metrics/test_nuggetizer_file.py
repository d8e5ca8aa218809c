"""The shared nugget file (`nuggetizer.nuggets=FILE`): never written through a symbolic link, each topic created
once among the runs that share it (a second run at the same time waits for the first's nuggets and takes them),
and a topic given twice read once when both lines hold the same nuggets, refused naming both lines when not."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench.api import ConfigError, Example
from ragbench.metrics.nuggetizer.pool import Pool
from ragbench.metrics.nuggetizer.steps import Nugget

TOPIC = Example(id="7", question="what is a river", gold={"qrels": {"d1": 1, "d2": 0}})


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps({"id": "d1", "title": "", "text": "a river flows"}) + "\n", encoding="utf-8")
    return path


def line(topic: str, texts: list[str], ours: bool = True) -> str:
    record = {"query": "q", "qid": topic, "nuggets": [{"text": t, "importance": "vital"} for t in texts]}
    return json.dumps(record | ({"ragbench": {"judge": "x"}} if ours else {})) + "\n"


async def made(texts: list[str]) -> list[Nugget]:
    return [Nugget(f"made from {texts}", "okay")]


def test_a_nugget_file_that_is_a_symbolic_link_is_read_never_written_through(corpus, tmp_path):
    theirs = tmp_path / "theirs.jsonl"
    theirs.write_text(line("8", ["a"]), encoding="utf-8")  # a file ragbench wrote, linked to
    link = tmp_path / "nuggets.jsonl"
    link.symlink_to(theirs)
    pool = Pool(corpus, link)
    assert asyncio.run(pool.nuggets(Example(id="8", question="q", gold={}), made, {})) == [Nugget("a", "vital")]
    with pytest.raises(ValueError, match="a symbolic link, never written through"):
        asyncio.run(pool.nuggets(TOPIC, made, {}))
    assert theirs.read_text(encoding="utf-8") == line("8", ["a"]) and link.is_symlink()


WORKER = """
import asyncio, json, sys, time
from pathlib import Path
from ragbench.api import Example
from ragbench.metrics.nuggetizer.pool import Pool
from ragbench.metrics.nuggetizer.steps import Nugget

corpus, nuggets, folder, name = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]

async def create(texts):
    with open(folder / f"{name}.created", "a") as handle:
        handle.write("1\\n")
    while name == "A" and not (folder / "go").exists():  # A holds the topic until the test lets it go
        await asyncio.sleep(0.01)
    return [Nugget(f"made by {name}", "vital")]

async def main():
    pool = Pool(corpus, nuggets)  # the file read: the topic not in it yet
    (folder / f"{name}.ready").touch()
    got = await pool.nuggets(Example(id="7", question="q", gold={"qrels": {"d1": 1}}), create, {"run": name})
    print(json.dumps([n.text for n in got]))

asyncio.run(main())
"""


def wait_for(path: Path, process: subprocess.Popen) -> None:
    """Until `path` is there (an event, not a duration: the outcome is what is asserted)."""
    while not path.exists():
        assert process.poll() is None, process.communicate()
        time.sleep(0.01)


def test_two_runs_at_once_create_a_topic_once_the_second_taking_the_firsts_nuggets(corpus, tmp_path):
    nuggets = tmp_path / "nuggets.jsonl"
    start = [sys.executable, "-c", WORKER, str(corpus), str(nuggets), str(tmp_path)]
    first = subprocess.Popen([*start, "A"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(tmp_path / "A.created", first)  # A is creating the topic's nuggets
    second = subprocess.Popen([*start, "B"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(tmp_path / "B.ready", second)  # B read the file before A wrote the topic
    (tmp_path / "go").touch()
    outs = [process.communicate(timeout=120) for process in (first, second)]
    assert [process.returncode for process in (first, second)] == [0, 0], outs
    assert [json.loads(out) for out, _ in outs] == [["made by A"], ["made by A"]]
    assert not (tmp_path / "B.created").exists()
    lines = nuggets.read_text(encoding="utf-8").splitlines()
    assert [json.loads(text)["qid"] for text in lines] == ["7"]


nugget_texts = st.lists(st.text(max_size=6), min_size=1, max_size=3)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=nugget_texts, second=nugget_texts, ours=st.booleans())
def test_a_topic_twice_is_read_once_with_the_same_nuggets_and_refused_with_others(
    corpus, tmp_path, first, second, ours
):
    nuggets = tmp_path / "twice.jsonl"
    nuggets.write_text(line("7", first, ours) + line("8", ["b"], ours) + line("7", second, ours), encoding="utf-8")
    if first == second:
        got = asyncio.run(Pool(corpus, nuggets).nuggets(TOPIC, made, {}))
        assert got == [Nugget(text, "vital") for text in first]
    else:
        with pytest.raises(ConfigError) as caught:
            Pool(corpus, nuggets)
        assert str(caught.value) == (
            f"{nuggets}:3: topic 7 again, with other nuggets than on line 1: keep one of the two lines"
        )


def test_a_nugget_with_a_line_separator_in_its_text_is_written_and_read_back(corpus, tmp_path):
    """ragbench writes nugget lines with their text as it is (ensure_ascii=False): a U+2028 in a nugget is inside
    its JSON line, which only "\\n" ends; a second run and a topic appended later read the file whole."""
    path = tmp_path / "nuggets.jsonl"

    async def separated(texts: list[str]) -> list[Nugget]:
        return [Nugget("one\u2028two\u0085three", "vital")]

    first = Pool(corpus, path)
    assert asyncio.run(first.nuggets(TOPIC, separated, {"judge": "x"})) == [Nugget("one\u2028two\u0085three", "vital")]
    other = Example(id="8", question="q", gold={"qrels": {"d1": 1}})
    assert asyncio.run(first.nuggets(other, separated, {"judge": "x"})) == [Nugget("one\u2028two\u0085three", "vital")]
    again = Pool(corpus, path)
    assert again.topics == {
        "7": [Nugget("one\u2028two\u0085three", "vital")],
        "8": [Nugget("one\u2028two\u0085three", "vital")],
    }


def test_a_line_nested_100000_deep_is_refused_in_one_line_naming_it(corpus, tmp_path):
    """Read when the metric is made, and in the lines another run appends later (read through `written`)."""
    deep = '{"qid": "8", "nuggets": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    nuggets = tmp_path / "deep.jsonl"
    nuggets.write_text(line("7", ["a"]) + deep, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        Pool(corpus, nuggets)
    assert str(caught.value).startswith(f"{nuggets}:2: not a nugget line")
    assert "nested too deeply to parse" in str(caught.value) and "\n" not in str(caught.value)
    later = tmp_path / "later.jsonl"
    later.write_text(line("7", ["a"]), encoding="utf-8")
    pool = Pool(corpus, later)
    with later.open("a", encoding="utf-8") as handle:
        handle.write(deep)  # another run's line, read once this one takes a topic's lock
    with pytest.raises(ConfigError, match=f"{later}:2: not a nugget line .*nested too deeply"):
        asyncio.run(pool.nuggets(Example(id="8", question="q", gold={"qrels": {"d1": 1}}), made, {}))

"""--resume, whatever the records (any text, lone surrogates included; any ids: repeated, empty, numbers, ids
that read as another record's key; bad records among them) and whatever happened to the run folder and the
data since (a samples file cut at any byte, lines lost, records moved, edited, added or removed): no
traceback, every record of the data counted once (scored, failed, bad or missing), every example in the
samples once and in data order, results.json strict JSON, and the numbers of a fresh run of the data."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import event, given, settings
from hypothesis import strategies as st
from test_resume_data_changes import TASK, closed_book_run

from ragbench.api import ConfigError, EngineError
from ragbench.testing import PreflightError, Registry
from support.helpers import comparable

# any character, a lone high surrogate ("\ud800", written as its escape: tests/storage/test_lone_surrogates.py) among
# them; not a low one, which after it would read back as the one character the two pair into
TEXT = st.text(
    st.characters(codec=None, exclude_categories=("Cs",)) | st.sampled_from('\n"\\\u0085\u2028\ud800'), max_size=12
)
IDS = st.one_of(
    TEXT, st.integers(-3, 3), st.sampled_from(["#record-0", "#record-1", "#record-2", "bad record 1", "id 1", "1", ""])
)
GOOD = st.fixed_dictionaries({"id": IDS, "question": TEXT, "golden_answers": st.lists(TEXT, min_size=1, max_size=2)})
BAD = st.sampled_from(
    [
        '{"id": "cut", "question": "Wh',
        "[1, 2]",
        '{"id": "no question"}',
        '"a string"',
        '{"id": 5, "question": 7, "golden_answers": ["x"]}',
    ]
)
RECORDS = st.lists(st.one_of(GOOD, GOOD, GOOD, BAD), min_size=1, max_size=5)
FIRST = json.dumps({"id": "first", "question": "What is one?", "golden_answers": ["one"]})  # the pre-flight's
SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") else None  # no disk flush to wait for where there is memory


def line(record) -> str:
    return record if isinstance(record, str) else json.dumps(record)


def write_data(folder: Path, lines: list[str]) -> None:
    """The data file, its modification time moved on (as an edit seconds later would)."""
    path = folder / "data.jsonl"
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text("".join(text + "\n" for text in lines), encoding="utf-8")
    os.utime(path, ns=(before + 10**9, before + 10**9))


FLAKY = [False]  # while set, the model fails on prompts of odd length (a server that was down: resumed later)


def answer(request) -> str:
    if FLAKY[0] and len(request.prompt) % 2:
        raise EngineError("HTTP 503")
    return request.prompt.rstrip("\n").rsplit("\n", 1)[-1]  # the answer of `scripted:echo`


def evaluate(folder: Path, output: str, registry: Registry, resume: bool = False, flaky: bool = False):
    FLAKY[0] = flaky
    return closed_book_run(folder / "t.yaml", f"scripted:{__name__}:answer", folder / output, resume, registry)


@st.composite
def damages(draw, lines: list[str]):
    """What happens between the run and its resume: the data's lines after it, and how the samples file is
    damaged (a byte to cut it at, lines to lose)."""
    data = list(lines)
    if draw(st.booleans()):
        data = draw(st.permutations(data))
    if data and draw(st.booleans()):
        del data[draw(st.integers(0, len(data) - 1))]
    if draw(st.booleans()):
        data.insert(draw(st.integers(0, len(data))), line(draw(st.one_of(GOOD, BAD))))
    if data and draw(st.booleans()):
        data[draw(st.integers(0, len(data) - 1))] = line(draw(GOOD))
    return data, draw(st.none() | st.floats(0, 1)), draw(st.lists(st.integers(0, 9), max_size=3))


def damage_samples(path: Path, cut: float | None, lost: list[int]) -> None:
    if not path.is_file():
        return
    lines = path.read_bytes().splitlines(keepends=True)
    lines = [text for n, text in enumerate(lines) if n not in lost]
    data = b"".join(lines)
    path.write_bytes(data if cut is None else data[: int(cut * len(data))])


def saved(run: Path) -> list[dict]:
    """The samples, split at newlines only (a text's U+0085 or U+2028 is no line end of JSONL)."""
    return [json.loads(text) for text in (run / "samples" / "tq.jsonl").read_bytes().split(b"\n") if text]


def strict_json(text: str):
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@settings(max_examples=30)
@given(st.data())
def test_resume_after_any_damage_counts_every_record_once_and_equals_a_fresh_run(shared_registry, data):
    lines = [line(record) for record in data.draw(RECORDS, label="records")]
    now, cut, lost = data.draw(damages(lines), label="damage")
    lines, now = [FIRST, *lines], [FIRST, *now]  # a usable first record: else the pre-flight refuses the data
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        folder = Path(tmp)
        (folder / "t.yaml").write_text(TASK)
        write_data(folder, lines)
        try:
            evaluate(folder, "run", shared_registry, flaky=data.draw(st.booleans(), label="flaky"))
        except PreflightError:  # the first record is what the pre-flight checks (an empty id): refused
            event("refused by the pre-flight")
            return
        write_data(folder, now)
        damage_samples(folder / "run" / "samples" / "tq.jsonl", cut, lost)
        try:
            resumed = evaluate(folder, "run", shared_registry, resume=True)
        except PreflightError:  # as above, the data's first record now
            event("resume refused by the pre-flight")
            return
        except ConfigError as refused:  # allowed, in one line
            assert "\n" not in str(refused)
            event("resume refused")
            return
        event("resumed")
        results = strict_json((folder / "run" / "results.json").read_text(encoding="utf-8"))
        counts = results["counts"]["tq"]
        assert counts["scored"] + counts["failed"] + counts["bad_records"] + counts["missing"] == len(now), counts
        assert counts["missing"] == 0
        samples = saved(folder / "run")
        assert [s["index"] for s in samples] == list(range(len(now)))  # each record once, in data order
        shutil.rmtree(folder / "run" / "cache.sqlite", ignore_errors=True)
        fresh = evaluate(folder, "fresh", shared_registry)
        assert comparable(resumed.results) == comparable(fresh.results)
        assert resumed.results["data_sha256"] == fresh.results["data_sha256"]
        assert [s.get("id") for s in samples] == [s.get("id") for s in saved(folder / "fresh")]

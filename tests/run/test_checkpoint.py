"""The checkpoint (ragbench._storage.checkpoint): for any edit of a data file between a run and its --resume
(records reordered, edited, added, removed), the resume runs again exactly the records that are new or
changed, and ends as a fresh run of the file ends: ids in data order, the same numbers and `data_sha256`. And the
data fingerprint a finished run's --resume compares (ragbench._storage.datafiles; what the resume does with it:
tests/run/test_resume_finished_inputs.py)."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_resume_data_changes import TASK, closed_book_run
from test_resume_properties import write_data

from ragbench._engines.scripted import echo
from ragbench._storage.checkpoint import TaskCheckpoint, checkpoint_key, record_digest
from ragbench._storage.datafiles import stat_fingerprint
from ragbench.testing import Registry
from support.helpers import comparable, samples

SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") else None
TEXT = st.text(st.characters(codec="utf-8"), max_size=6)


@dataclass
class Record:
    id: str
    question: str
    index: int = 0


@st.composite
def edits(draw, records: list[dict]) -> list[dict]:
    """`records` after an edit script: reordered, some removed, some added (new ids), some edited in place."""
    now = list(draw(st.permutations(records)))
    for _ in range(draw(st.integers(0, 2))):
        if now:
            del now[draw(st.integers(0, len(now) - 1))]
    for n in range(draw(st.integers(0, 2))):
        now.insert(draw(st.integers(0, len(now))), {"id": f"new{n}", "question": draw(TEXT)})
    for _ in range(draw(st.integers(0, 2))):
        if now:
            at = draw(st.integers(0, len(now) - 1))
            now[at] = {**now[at], "question": now[at]["question"] + draw(st.sampled_from(["?", " edited"]))}
    return now


def changed(before: list[dict], now: list[dict]) -> list[str]:
    """The ids of `now` whose record `before` did not hold as it is now."""
    return [r["id"] for r in now if r not in before]


OLD = st.lists(TEXT, min_size=1, max_size=6).map(lambda qs: [{"id": f"r{n}", "question": q} for n, q in enumerate(qs)])


# ids of any text but those `edits` adds
ANY_IDS = st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=6, unique_by=lambda pair: pair[0]).map(
    lambda pairs: [{"id": i, "question": q} for i, q in pairs if not i.startswith("new")]
)


@settings(max_examples=60)
@given(data=st.data())
def test_the_checkpoint_runs_again_exactly_the_new_and_changed_records_at_their_places_now(data):
    old = data.draw(ANY_IDS)
    now = data.draw(edits(old))
    saved = {checkpoint_key(r["id"], n): record_digest(Record(**r, index=n)) for n, r in enumerate(old)}
    read = TaskCheckpoint(saved)
    ran = [
        r["id"]
        for n, r in enumerate(now)
        if read.needs_run(checkpoint_key(r["id"], n), n, lambda r=r, n=n: record_digest(Record(**r, index=n)))
    ]
    assert ran == changed(old, now)
    assert read.positions == {checkpoint_key(r["id"], n): n for n, r in enumerate(now)} and read.records == len(now)
    finished = {
        **saved,
        **{checkpoint_key(r["id"], n): record_digest(Record(**r)) for n, r in enumerate(now) if r["id"] in ran},
    }  # the samples once the changed records ran again
    assert read.kept(finished) == len(now)  # a removed record's sample does not stand, every other one does


PROMPTED: list[str] = []  # the questions the model was asked


def answer(request) -> str:
    PROMPTED.append(request.prompt.removeprefix("Question: ").removesuffix("\nAnswer:"))
    return echo(request)


def evaluate(folder: Path, output: str, registry: Registry, resume: bool = False):
    PROMPTED.clear()
    return closed_book_run(
        folder / "t.yaml",
        f"scripted:{__name__}:answer",
        folder / output,
        resume,
        registry,
        cache=str(folder / f"{output}-{resume}.sqlite"),  # no reply from an earlier attempt
    )


def data_lines(records: list[dict]) -> list[str]:
    return [json.dumps({**r, "question": f"{r['id']}: {r['question']}", "golden_answers": ["gold"]}) for r in records]


@settings(max_examples=15)
@given(data=st.data())
def test_a_resume_after_any_edit_of_the_data_runs_the_changed_records_and_ends_as_a_fresh_run(shared_registry, data):
    old = data.draw(OLD)
    now = data.draw(edits(old))
    assume(now)  # a file with no record is refused by the pre-flight (tests/run/test_preflight.py)
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        folder = Path(tmp)
        (folder / "t.yaml").write_text(TASK)
        write_data(folder, data_lines(old))
        evaluate(folder, "run", shared_registry)
        write_data(folder, data_lines(now))
        resumed = evaluate(folder, "run", shared_registry, resume=True)
        assert sorted(PROMPTED) == sorted(
            f"{i}: {r['question']}" for i in changed(old, now) for r in now if r["id"] == i
        )
        fresh = evaluate(folder, "fresh", shared_registry)
        assert comparable(resumed.results) == comparable(fresh.results)
        assert resumed.results["data_sha256"] == fresh.results["data_sha256"]
        assert [s["id"] for s in samples(folder / "run", "tq")] == [r["id"] for r in now]
        assert [s["index"] for s in samples(folder / "run", "tq")] == list(range(len(now)))


def test_the_data_fingerprint_of_a_folder_follows_the_size_and_time_of_each_file_under_it(tmp_path):
    folder = tmp_path / "data"
    (folder / "a").mkdir(parents=True)
    (folder / "a" / "x.jsonl").write_text("{}\n")
    (folder / "y.jsonl").write_text("{}\n")
    before = stat_fingerprint(folder)
    assert before["files"] == 2 and stat_fingerprint(folder) == before
    os.utime(folder / "a" / "x.jsonl", ns=(1, 1))  # a copy over it keeping size: the time tells
    assert stat_fingerprint(folder) != before
    assert stat_fingerprint(tmp_path / "nowhere") == {"path": str(tmp_path / "nowhere"), "missing": True}


def test_an_examples_digest_holds_its_images_by_content_and_one_without_keeps_its_old_digest(tmp_path):
    """The same picture from two paths is one example; other bytes another; an example without images keeps the
    digest an older ragbench recorded (fields added since are fed only where set), so --resume runs none again."""
    from ragbench.api import Document, Example, Image

    png = b"\x89PNG\r\n\x1a\n" + b"picture one"
    (tmp_path / "a.png").write_bytes(png)
    (tmp_path / "b.png").write_bytes(png)
    (tmp_path / "c.png").write_bytes(png + b"!")
    of = {
        name: Example(id="1", question="q", images=(Image.of(tmp_path / name),)) for name in ("a.png", "b.png", "c.png")
    }
    assert record_digest(of["a.png"]) == record_digest(of["b.png"]) != record_digest(of["c.png"])
    plain = Example(id="1", question="q", docs=[Document(id="d", title="t", text="x")])
    assert record_digest(plain) == "252171d6335c5b77b8db87d9fd1a2a23d3de4298ee1beb2bab8441b0170212d8"  # d5e1e66a's
    assert record_digest(plain) != record_digest(Example(id="1", question="q", images=of["a.png"].images))


def test_a_read_only_examples_digest_is_made_once_and_a_mutable_ones_follows_its_changes(monkeypatch):
    """The system that records an application's answer and the example's sample both read the digest of the one
    read-only example the run hands out: it is fed once and kept by the example itself, outside its fields (never
    compared, copied, pickled or written); a mutable example is fed each time (it may have changed since)."""
    import copy
    import dataclasses
    import hashlib
    import pickle
    from types import SimpleNamespace

    from ragbench._read_only import KEPT_VALUES
    from ragbench._storage import checkpoint
    from ragbench.api import Example

    fed = []  # the digests made
    monkeypatch.setattr(checkpoint, "hashlib", SimpleNamespace(sha256=lambda: fed.append(1) or hashlib.sha256()))
    example = Example(id="1", question="q", gold={"answers": ["a"]})
    sealed = example.read_only()
    assert record_digest(sealed) == record_digest(sealed) == record_digest(example)
    assert len(fed) == 2  # the read-only copy's once, the mutable record's once
    example.question = "another"
    assert record_digest(example) != record_digest(sealed)
    assert len(fed) == 3  # the mutable one again; the read-only one kept
    original = Example(id="1", question="q", gold={"answers": ["a"]})
    for made in (copy.copy(sealed), copy.deepcopy(sealed), pickle.loads(pickle.dumps(sealed))):
        assert made == original and KEPT_VALUES not in vars(made)
    assert sealed == original and dataclasses.asdict(sealed) == dataclasses.asdict(original)
    assert KEPT_VALUES in vars(sealed) and KEPT_VALUES not in repr(sealed)

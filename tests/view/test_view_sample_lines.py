"""The viewer reads a samples file through the one reader (`ragbench._records.located_records`): a line that
`read_samples` refuses is counted and named on the run page, never shown as an example nor a traceback; and
for any file, read whole or followed as it grows, the index's rows read again from their offsets are the
records `read_samples` gives (the latest attempt of each example), its bad lines the errors it gives; its lock holds
whatever the file does, and an unchanged run is not read again on every request."""

from __future__ import annotations

import json
import tempfile
import threading
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from test_view_live import finished
from test_view_live import write_run as live_run

from ragbench._records import SampleRecord, read_samples, sample_line
from ragbench._storage.checkpoint import checkpoint_key
from ragbench._storage.jsonl import dumps
from ragbench._view.catalog import RunCatalog
from ragbench._view.runs import SampleIndex
from ragbench._view.site import Site
from ragbench.api import RecordError
from ragbench.testing import installed_registry

ANY_CHARACTER = st.characters(codec=None, exclude_categories=())  # lone surrogates too
DAMAGED = [  # lines that are no sample record, each refused by `read_samples` for another reason
    b'{"index": 3, "id": "cut", "quest',  # cut short
    b"not json",
    b"[1, 2]",  # not an object
    b'{"id": "by hand", "question": "q?"}',  # no position: not a line a run wrote
    b'{"index": 4, "id": "g", "gold": [1]}',  # a field of another shape
    b'{"schema_version": 99, "index": 5, "id": "new"}',  # a newer ragbench's
    b'\xff{"index": 6, "id": "u"}',  # not UTF-8
    b"",  # blank: skipped, not counted
]
OLDER = b'{"index": 7, "id": "old", "question": "q?", "prediction": "an older ragbench\'s answer"}'


def sample(example_id: str, index: int, question: str, score: float) -> bytes:
    record = SampleRecord(id=example_id, index=index, question=question, answer=question[::-1], scores={"em": score})
    return dumps(sample_line(record)).encode("utf-8")


def write_run(folder: Path, lines: list[bytes]) -> Path:
    (folder / "samples").mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"config": {"tasks": ["t"], "system": "vanilla"}}))
    (folder / "samples" / "t.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    return folder


def test_lines_that_are_no_sample_record_are_counted_and_named_on_the_run_page(tmp_path):
    lines = [sample("a", 0, "q0?", 1.0), *DAMAGED, OLDER, sample("b", 1, "q1?", 0.0)]
    run = write_run(tmp_path / "run", lines)
    site = Site(RunCatalog([str(run)]), registry=installed_registry())
    rid = site.runs[0].rid
    path = run / "samples" / "t.jsonl"
    errors: list[RecordError] = []
    expected = list(read_samples(path, errors, older_shapes=True))
    assert [r.id for r in expected] == ["a", "old", "b"] and len(errors) == 7

    bad = site.data(f"run/{rid}")["bad_lines"]["t"]
    assert bad == {"count": 7, "lines": [str(error) for error in errors]}
    assert [line.split(": ", 1)[0] for line in bad["lines"]] == [f"{path}:{n}" for n in range(2, 9)]
    assert "not a sample record (no integer `index`)" in bad["lines"][3] and "`gold`" in bad["lines"][4]
    rows = site.data(f"rows/{rid}/t/0")["rows"]
    assert [(row["id"], row["answer"]) for row in rows] == [
        ("a", "?0q"),
        ("old", "an older ragbench's answer"),
        ("b", "?1q"),
    ]
    assert [site.data(f"example/{rid}/t/{n}")["id"] for n in range(3)] == ["a", "old", "b"]


def test_a_run_without_bad_lines_says_none(tmp_path):
    run = write_run(tmp_path / "run", [sample("a", 0, "q?", 1.0)])
    site = Site(RunCatalog([str(run)]), registry=installed_registry())
    assert site.data(f"run/{site.runs[0].rid}")["bad_lines"] == {"t": {"count": 0, "lines": []}}


VALID = st.builds(
    sample, st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 3), st.text(ANY_CHARACTER, max_size=8), st.just(1.0)
)
LINES = st.lists(VALID | st.sampled_from([*DAMAGED, OLDER]), max_size=12)


@settings(max_examples=150, deadline=None)
@given(lines=LINES, cuts=st.lists(st.integers(0, 4000), max_size=4), ended=st.booleans())
def test_the_index_reads_what_read_samples_reads_whole_or_followed_as_the_file_grows(lines, cuts, ended):
    text = b"\n".join(lines) + (b"\n" if ended and lines else b"")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        path.write_bytes(b"")
        index = SampleIndex(path)
        written = 0
        for cut in sorted(cut % (len(text) + 1) for cut in cuts):  # appended a piece at a time, any byte a cut
            with path.open("ab") as handle:
                handle.write(text[written:cut])
            written = max(written, cut)
            index.refresh()
        with path.open("ab") as handle:
            handle.write(text[written:])
        index.refresh()

        errors: list[RecordError] = []
        latest: dict[str, SampleRecord] = {}  # by example: its position in the table, its latest attempt
        for record in read_samples(path, errors, older_shapes=True):
            latest[checkpoint_key(record.id, record.index)] = record
        assert [index.record(n) for n in range(len(index.rows))] == list(latest.values())
        assert [row["id"] for row in index.rows] == [record.id for record in latest.values()]
        assert index.bad_lines() == {"count": len(errors), "lines": [str(error) for error in errors]}


def test_an_unchanged_run_is_not_read_again_on_every_request(tmp_path, monkeypatch):
    """Each request `ragbench view` serves is one `Site.data` (the server around it reads no file)."""
    run = live_run(tmp_path / "run", [{"id": "a", "question": "q?"}], results=finished())
    site = Site(RunCatalog([str(run)]), registry=installed_registry())
    reads: list[str] = []
    read_text = Path.read_text

    def counted(path, *args, **kwargs):
        reads.append(path.name)
        return read_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counted)
    site.data("runs")
    first = reads.count("results.json")
    for _ in range(5):
        site.data("runs")
        site.data("run/run")
    assert first <= 1 and reads.count("results.json") == first
    (run / "results.json").write_text(json.dumps(finished(value=0.75)))  # changed: read again
    assert site.data("run/run")["tasks"]["t"]["metrics"]["em"]["value"] == 0.75


def test_no_two_threads_index_a_sample_file_at_once_when_it_disappears(tmp_path):
    """A refresh that finds the file gone must not replace the lock other threads queue on: the thread
    queued on the old lock and one arriving later would index at the same time."""
    path = live_run(tmp_path / "run", [{"id": "a"}]) / "samples" / "t.jsonl"
    index = SampleIndex(path)
    inside, most, count = [0], [0], threading.Lock()
    gates = {"A": threading.Event(), "B": threading.Event()}
    arrived = {"A": threading.Event(), "B": threading.Event(), "C": threading.Event()}

    class GatedPath:
        """The file, with each thread's stat (made under the index's lock) held at a gate."""

        def stat(self):
            name = threading.current_thread().name
            with count:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            try:
                arrived[name].set()
                if name in gates:
                    gates[name].wait(10)
                if name == "A":
                    raise FileNotFoundError(path)  # the run folder was rewritten: gone for a moment
                return path.stat()
            finally:
                with count:
                    inside[0] -= 1

        def open(self, *args, **kwargs):
            return path.open(*args, **kwargs)

        def __fspath__(self):  # the sample reader opens it by its path
            return str(path)

    index.path = GatedPath()
    threads = {name: threading.Thread(target=index.refresh, name=name) for name in ("A", "B", "C")}
    threads["A"].start()
    assert arrived["A"].wait(10)
    threads["B"].start()  # queues on the lock A holds
    threading.Event().wait(0.5)
    gates["A"].set()  # A finds the file gone and leaves; B goes in and is held
    assert arrived["B"].wait(10)
    threads["C"].start()  # must queue behind B
    arrived["C"].wait(1)
    gates["B"].set()
    for thread in threads.values():
        thread.join(10)
    assert most[0] == 1
    assert [row["id"] for row in index.rows] == ["a"]

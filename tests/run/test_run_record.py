"""run.json is read and written through one typed record (`RunRecord`, ragbench._storage.run_record): what a run
folder writes reads back as the same record, in the key order ragbench has always written; a record its reader would
refuse is never written; the viewer reads run.json through the same record (an older file's missing keys as empty,
a damaged one as no record)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._storage.jsonl import strict_json
from ragbench._storage.run_record import RunRecord
from ragbench._storage.rundir import RunDir
from ragbench._view.runs import RunFolder

TEXT = st.text(max_size=6)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
OBJECT = st.dictionaries(TEXT, JSON, max_size=4)
COUNT = st.integers(min_value=0, max_value=10**9) | st.floats(min_value=0, max_value=1e9)
ATTEMPT = st.fixed_dictionaries(
    {"id": TEXT, "examples": st.integers(min_value=0, max_value=10**6), "wall_seconds": COUNT},
    optional={"llm_calls": st.integers(min_value=0, max_value=10**6), "interrupted": st.booleans()},
)
RECORDS = st.builds(
    RunRecord,
    config=OBJECT,
    config_hash=TEXT,
    identity=OBJECT,
    data=OBJECT,
    finished=st.none() | st.booleans(),
    attempts=st.lists(ATTEMPT, max_size=3),
    records=st.none() | st.dictionaries(TEXT, st.integers(min_value=0, max_value=10**6), max_size=3),
)


@settings(max_examples=60, deadline=None)
@given(record=RECORDS)
def test_every_record_ragbench_writes_reads_back_as_itself(record):
    assert record.problem() is None
    written = json.loads(strict_json(record.to_json(), indent=2))
    assert RunRecord.of(written) == record
    keys = ["config", "identity", "config_hash", "data", "finished", "attempts", "records"]
    assert list(written) == [key for key in keys if key in written]  # the order ragbench writes


def test_a_run_folder_writes_run_json_through_the_record_and_reads_it_back(tmp_path):
    folder = RunDir(tmp_path / "run")
    first = {"id": "a1", "examples": 0, "wall_seconds": 0.5, "interrupted": True}
    earlier = folder.start({"tasks": ["demo"]}, {"tasks": ["demo"]}, "h1", resume=False, data={"demo": {"n": 3}})
    assert earlier == []
    folder.record_attempt(first)
    folder.finish("{}", "# report\n", {"demo": 3}, {"id": "a1", "examples": 3, "wall_seconds": 1.25})
    folder.close()
    folder.lock.release()
    text = (tmp_path / "run" / "run.json").read_text()
    assert list(json.loads(text)) == ["config", "identity", "config_hash", "data", "finished", "attempts", "records"]
    assert RunDir(tmp_path / "run").record == RunRecord(
        config={"tasks": ["demo"]},
        config_hash="h1",
        identity={"tasks": ["demo"]},
        data={"demo": {"n": 3}},
        finished=True,
        attempts=[{"id": "a1", "examples": 3, "wall_seconds": 1.25}],
        records={"demo": 3},
    )


def test_the_viewer_reads_run_json_as_the_record(tmp_path):
    older = tmp_path / "older"
    older.mkdir()
    (older / "run.json").write_text(json.dumps({"config": {"tasks": ["t"], "system": "vanilla"}}))
    record = RunFolder(older, "r").record
    assert record is not None and record.finished is None and record.config["system"] == "vanilla"
    assert RunFolder(older, "r").config == {"tasks": ["t"], "system": "vanilla"}
    stopped = tmp_path / "stopped"
    stopped.mkdir()
    (stopped / "run.json").write_text(json.dumps({"config": {"tasks": ["t"]}, "finished": False}))
    (stopped / "results.json").write_text("{}")
    assert RunFolder(stopped, "r").results is None  # an attempt after the results.json stopped: not finished
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "run.json").write_text(json.dumps({"config": {"tasks": ["t"]}, "attempts": "many"}))
    assert RunFolder(damaged, "r").record is None and RunFolder(damaged, "r").config == {}

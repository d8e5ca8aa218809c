"""Property: the checkpoint's lines as `RunDir.finalize_samples` reads them (`saved_lines`, the samples' one reader)
give each line's checkpoint key as the run keyed its record (`checkpoint_key` of the id and position written), and
the attempt's cost written beside the record, for any ids, positions and costs; a line that is no sample record is
counted, never keyed."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._records import SampleRecord, sample_line, saved_lines
from ragbench._storage.checkpoint import checkpoint_key
from ragbench._storage.jsonl import dumps
from ragbench._storage.sample_files import ATTEMPT_COST

IDS = st.none() | st.integers() | st.text(st.characters(codec="utf-8"), max_size=8)
COSTS = st.none() | st.fixed_dictionaries({"id": st.text(max_size=4), "examples": st.integers(0, 10**6)})
LINES = st.lists(st.tuples(IDS, st.integers(0, 10**9), COSTS), max_size=8)


@settings(max_examples=60, deadline=None)
@given(LINES, st.integers(0, 8))
def test_each_saved_line_is_keyed_as_the_run_keyed_its_record(saved, broken_at):
    written = [
        dumps(
            {
                **sample_line(SampleRecord.sealed(id=id_, index=index, bad_record=id_ is None, error=None)),
                **({} if cost is None else {ATTEMPT_COST: cost}),
            }
        )
        for id_, index, cost in saved
    ]
    written.insert(min(broken_at, len(written)), '{"id": "cut sh')
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        path.write_text("".join(text + "\n" for text in written), encoding="utf-8")
        errors: list = []
        read = list(saved_lines(path, errors))
    assert [(entry.key, entry.position, entry.attempt_cost) for entry in read] == [
        (checkpoint_key(id_, index), index, cost) for id_, index, cost in saved
    ]
    assert len(errors) == 1 and [entry.line for entry in read] == [
        n for n in range(len(written)) if n != min(broken_at, len(written) - 1)
    ]

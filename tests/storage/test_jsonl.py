"""ragbench._storage.jsonl, the one JSONL reader and writer: every bad line reported with file, line and column; the
rows of a JSONL corpus (ragbench._retrieval.corpus.jsonl_rows) are its lines holding more than white space."""

from __future__ import annotations

import bz2
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._retrieval.corpus.jsonl_rows import row_starts
from ragbench._storage.jsonl import iter_jsonl, open_append, read_lines, read_records
from ragbench.api import RecordError
from ragbench.api.data import built_records, require


def test_a_json_error_names_its_real_line_and_column(tmp_path):
    path = tmp_path / "data.jsonl"
    bad = '{"id": "q1", "question": "x", : 1}'
    path.write_text('{"id": "q0"}\n\n' + bad + "\n")
    items = list(iter_jsonl(path))
    assert items[0] == (0, {"id": "q0"})
    index, error = items[1]
    assert index == 2 and isinstance(error, RecordError)
    assert (
        str(error) == f"{path}:3: not valid JSON at column {bad.index(':', 30) + 1}: Expecting property name "
        "enclosed in double quotes"
    )


def test_built_records_are_what_build_makes_and_each_bad_or_refused_line_its_error_in_line_order(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"id": "a", "n": 1}\nnot json\n{"id": "b"}\n[1]\n{"id": "c", "n": 3}\n')
    built = list(built_records(iter_jsonl(path), lambda record, index: (require(record, "n", path, index, int), index)))
    assert built[0] == (1, 0) and built[4] == (3, 4)
    errors = built[1:4]
    assert all(isinstance(error, RecordError) and error.path == str(path) for error in errors)
    assert [error.line for error in errors] == [2, 3, 4] and errors[1].field == "n"


def test_non_utf8_bytes_cut_lines_and_non_objects_are_reported_and_reading_goes_on(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_bytes(b'{"id": 1}\n{"id": "caf\xe9"}\n[1, 2]\n{"id": 4}\n{"id": 5, "ques')
    items = list(iter_jsonl(path))
    assert [i for i, _ in items] == [0, 1, 2, 3, 4]
    assert items[3] == (3, {"id": 4})
    assert str(items[1][1]) == f"{path}:2: not UTF-8 (byte 0xe9 at column 12); save the file as UTF-8"
    assert str(items[2][1]) == f"{path}:3: expected a JSON object, got list"
    assert str(items[4][1]).startswith(f"{path}:5: line cut short at column 16")
    records, errors = read_records(path)
    assert len(records) == 2 and len(errors) == 3


def test_a_truncated_bz2_stream_is_one_counted_error_not_a_silent_end(tmp_path):
    noise = random.Random(0)  # text bz2 cannot shrink much: several 900 kB blocks, the first ones whole
    whole = bz2.compress(
        b"".join(json.dumps({"id": i, "text": noise.randbytes(1000).hex()}).encode() + b"\n" for i in range(1200))
    )
    path = tmp_path / "data.jsonl.bz2"
    path.write_bytes(whole[: len(whole) // 2])
    with bz2.open(path, "rb") as handle:
        items = list(read_lines(handle, str(path)))
    good = [v for _, v in items if not isinstance(v, RecordError)]
    errors = [v for _, v in items if isinstance(v, RecordError)]
    assert 0 < len(good) < 1200 and len(errors) >= 1
    assert "cannot read past this line" in str(errors[-1]) and "cut short or corrupt" in str(errors[-1])


def test_appends_after_a_cut_line_start_on_a_line_of_their_own(tmp_path):
    path = tmp_path / "samples.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b", "sco')
    with open_append(path) as writer:
        writer.write({"id": "c", "text": "é"})
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[-1] == '{"id": "c", "text": "é"}' and len(lines) == 3
    records, errors = read_records(path)
    assert [r["id"] for r in records] == ["a", "c"] and len(errors) == 1


# -- the rows of a JSONL corpus (its docstore's numbering), whatever the lines -----------------------------------------------------------------------------

LINE = st.one_of(
    st.just(""),
    st.text(alphabet=" \t\r", max_size=4),
    st.text(alphabet=st.characters(blacklist_characters="\n", codec="utf-8"), min_size=1, max_size=12),
)


@settings(max_examples=60)
@given(lines=st.lists(LINE, max_size=30), final_newline=st.booleans(), block=st.integers(1, 17))
def test_rows_are_the_lines_holding_more_than_whitespace_at_any_block_size(lines, final_newline, block):
    data = ("\n".join(lines) + ("\n" if final_newline and lines else "")).encode("utf-8")
    expected, offset = [], 0
    for line in data.split(b"\n"):
        if line.strip(b" \t\r"):
            expected.append(offset)
        offset += len(line) + 1
    assert row_starts(data, block).tolist() == expected

"""A corpus part read as an object of a store is (`ranged_file`): large ranged reads, the lines split by Python's
buffered reader, give exactly the local file's lines, passages, bad rows and digest, for any bytes (CRLF, a lone CR,
a last line without a newline, undecodable bytes, lines across block and part boundaries), any parts and any block
size; and a part's reads stay in its own bytes (from the byte before it to its last line's end, and a tail)."""

from __future__ import annotations

import tempfile
from dataclasses import astuple
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragbench._errors import ConfigError, RecordError
from ragbench._retrieval.corpus import parts
from ragbench._retrieval.corpus.parts import PartReading, corpus_parts, error_record, read_part
from ragbench._storage import ranged_file

PIECES = [b"\n", b"\r\n", b"\r", b"\t", b'"', b"\xff", '{"id": "p", "contents": "caf\u00e9 \u6771"}'.encode()]
content = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(max_size=12).map(str.encode), st.binary(max_size=6)), max_size=40
).map(b"".join)


def passages(part, reading):
    return [error_record(item) if isinstance(item, RecordError) else astuple(item) for item in read_part(part, reading)]


def opener(data, block, reads):
    """`open_bytes` of a file holding `data` read in blocks of `block`, each read's (start, stop) noted in `reads`."""

    def read(start: int, stop: int) -> bytes:
        reads.append((start, stop))
        return data[start:stop]

    return lambda _, until: ranged_file.ranged_file(read, len(data), until, block)


def seen(reading):
    return reading.lines, reading.first, reading.end, reading.digest.hexdigest()


@settings(max_examples=150, deadline=None)
@given(content, st.integers(1, 6), st.integers(1, 40), st.integers(1, 9), st.sampled_from([".jsonl", ".tsv"]))
@example(b'{"id": "a", "contents": "x"}\r\n{"id": "b", "contents": "y"}', 2, 5, 3, ".jsonl")
@example(b'id\ttext\ttitle\np1\t"a\nb"\tT\np2\tc\tT\n', 2, 4, 2, ".tsv")
def test_a_part_read_in_ranged_blocks_is_the_local_files_part(data, count, block, tail, suffix):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"corpus{suffix}"
        path.write_bytes(data)
        try:
            cut = corpus_parts(path, count)
        except ConfigError:  # more parts than lines: refused before any part is read (test_shard_build_faults.py)
            assert parts.lines_up_to(path, count) < count
            return
        for part in cut:
            here = PartReading()
            expected = passages(part, here)
            reads: list[tuple[int, int]] = []
            with pytest.MonkeyPatch.context() as ranged:
                ranged.setattr(ranged_file, "TAIL", tail)
                ranged.setattr(parts, "open_bytes", opener(data, block, reads))
                there = PartReading()
                assert passages(part, there) == expected
            assert seen(there) == seen(here)
            if suffix == ".jsonl":  # a TSV part reads the file's first row too (its header)
                assert all(max(0, part.start - 1) <= start and stop <= there.end + tail for start, stop in reads)

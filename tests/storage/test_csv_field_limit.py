"""CSV and TSV values of any length are read (a YAML task's CSV, a DPR corpus) without changing csv's field limit
for the rest of the process: importing ragbench leaves it alone, and it is back to what it was between reads."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest

from ragbench.api.retrieval import read_corpus
from ragbench.api.yaml_tasks import file_records

LONG = "x" * 300_000  # past csv's default limit of 128 KiB a value


@pytest.fixture(autouse=True)
def default_limit():
    """csv's own default in force, whatever an earlier test or import left; restored after."""
    before = csv.field_size_limit(131072)
    yield
    csv.field_size_limit(before)


def test_importing_the_readers_leaves_the_process_limit_as_it_was():
    code = (
        "import csv; import ragbench._retrieval.corpus.readers, ragbench._yaml_tasks.sources, ragbench._cli.main; "
        "print(csv.field_size_limit())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "131072", done.stderr


def test_a_long_csv_value_is_read_and_the_limit_is_set_back_between_records(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(f"id,question\nq1,{LONG}\nq2,short\n")
    records = file_records(path, "csv")
    _, first = next(records)
    assert first == {"id": "q1", "question": LONG}
    assert csv.field_size_limit() == 131072  # the reader is paused: other code reads with its own limit
    assert [record for _, record in records] == [{"id": "q2", "question": "short"}]
    assert csv.field_size_limit() == 131072


def test_a_long_passage_of_a_dpr_corpus_is_read_and_the_limit_is_set_back(tmp_path):
    path = tmp_path / "psgs.tsv"
    path.write_text(f"id\ttext\ttitle\n1\t{LONG}\tT\n2\tshort\tU\n")
    passages = read_corpus(path)
    assert next(passages).text == LONG
    assert csv.field_size_limit() == 131072
    assert [p.text for p in passages] == ["short"] and csv.field_size_limit() == 131072

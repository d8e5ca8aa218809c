"""results.json `data_sha256`: one digest per task of the examples its numbers come from, equal for two runs
that scored the same examples wherever their data lay, and different once a record differs."""

from __future__ import annotations

import json

from test_resume_data_changes import RECORDS, TASK

from conftest import write_jsonl
from support.helpers import run


def digest(tmp_path, name: str, records: list, **config) -> str:
    folder = tmp_path / f"{name}_data"
    folder.mkdir()
    (folder / "t.yaml").write_text(TASK)
    write_jsonl(folder / "data.jsonl", records)
    config = {"system": "closed_book", "model": "scripted:echo", **config}
    results = run(tmp_path, name, tasks=[str(folder / "t.yaml")], **config)
    return results["data_sha256"]["tq"]


def test_runs_of_the_same_examples_share_the_digest_and_a_changed_record_changes_it(tmp_path):
    first = digest(tmp_path, "a", RECORDS)
    assert len(first) == 64
    assert digest(tmp_path, "b", RECORDS, system="vanilla", retriever="none") == first  # another system
    edited = [RECORDS[0], {**RECORDS[1], "golden_answers": ["2"]}, *RECORDS[2:]]
    assert digest(tmp_path, "c", edited) != first  # one gold answer changed
    assert digest(tmp_path, "d", [RECORDS[1], RECORDS[0], *RECORDS[2:]]) != first  # the same records, reordered
    assert digest(tmp_path, "e", RECORDS, limit=2) != first  # fewer examples scored
    assert digest(tmp_path, "f", [*RECORDS[:-1], {"id": "q4"}]) != first  # the last record bad


def test_report_md_shows_the_digest_of_each_task(tmp_path):
    full = digest(tmp_path, "a", RECORDS)
    report = (tmp_path / "a" / "report.md").read_text()
    assert (
        "| task | records | scored | failed examples | bad records | missing | metric failures | data sha256 |"
        in report
    )
    assert f"| tq | 4 | 4 | 0 | 0 | 0 | 0 | {full[:12]} |" in report
    assert json.loads((tmp_path / "a" / "results.json").read_text())["data_sha256"] == {"tq": full}

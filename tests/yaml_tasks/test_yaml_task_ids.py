"""A YAML task's example ids: the records' own, or their positions when no record has one; never a mix, where
a position could be another record's real id."""

from __future__ import annotations

import json

from ragbench.api import RecordError
from ragbench.api.yaml_tasks import yaml_task_class

TASK = """task: ids
data:
  path: data.jsonl
prompt:
  template: "Q: {{ question }}"
metrics: [em]
"""


def examples(tmp_path, records):
    (tmp_path / "t.yaml").write_text(TASK)
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return list(yaml_task_class(tmp_path / "t.yaml")().examples())


def record(question, **fields):
    return {"question": question, "answers": ["a"], **fields}


def test_records_without_ids_are_numbered_by_position(tmp_path):
    assert [e.id for e in examples(tmp_path, [record("a"), record("b"), record("c")])] == ["0", "1", "2"]


def test_a_record_without_an_id_among_records_with_ids_is_the_bad_record_not_the_one_whose_id_it_would_take(tmp_path):
    out = examples(tmp_path, [record("a", id=1), record("b"), record("c", id=0)])
    assert [e.id for e in out if not isinstance(e, RecordError)] == ["1", "0"]  # id 0 is the third record's own
    [bad] = [e for e in out if isinstance(e, RecordError)]
    assert bad.line == 2 and bad.field == "id"
    assert str(bad).endswith(
        "data.jsonl:2 field 'id': missing field, while the data's records have ids (its position "
        "would be its id, which can be another record's); give it an id"
    )


def test_a_record_with_an_id_among_records_numbered_by_position_is_a_bad_record(tmp_path):
    out = examples(tmp_path, [record("a"), record("b", id=0), record("c")])
    assert [e.id for e in out if not isinstance(e, RecordError)] == ["0", "2"]
    [bad] = [e for e in out if isinstance(e, RecordError)]
    assert bad.line == 2 and bad.field == "id" and "while the data's first record has none" in str(bad)


def test_a_first_record_that_does_not_map_does_not_decide(tmp_path):
    out = examples(tmp_path, [{"answers": ["a"]}, record("b", id="x"), record("c", id="y")])
    assert isinstance(out[0], RecordError) and out[0].field == "question"
    assert [e.id for e in out[1:]] == ["x", "y"]

"""A JSON document whose records are a mapping of key -> record (MIRAGE's benchmark.json: {set: {id: record}})
is read with `data.keys_as`, each record given its key as that field; choice texts that are a mapping of
label -> text (MIRAGE's `options`) give the labels and texts in label order."""

from __future__ import annotations

import json

import pytest
from test_yaml_tasks import spec_task

from ragbench.api import ConfigError

RECORDS = {
    "easy": {
        "q1": {"question": "Which vitamin prevents scurvy?", "options": {"B": "C", "A": "D"}, "answer": "B"},
        "q0": {"question": "Which organ pumps blood?", "options": {"A": "heart", "B": "lung"}, "answer": "A"},
    },
    "hard": {"h1": {"question": "Q?", "options": {"A": "x", "B": "y"}, "answer": "A"}},
}
TASK = """task: t
data: {{path: d.json, records: easy{keys}}}
fields:
  gold:
    answers: answer
    choices: {{texts: options, answer_key: answer{labels}}}
answer_format: choice
metrics: [choice_accuracy]
"""


def keyed_task(tmp_path, records=RECORDS, keys=", keys_as: id", labels=""):
    (tmp_path / "d.json").write_text(json.dumps(records), encoding="utf-8")
    return spec_task(tmp_path, TASK.format(keys=keys, labels=labels))


def test_keyed_records_are_read_in_document_order_with_their_key_as_the_id(tmp_path):
    examples = list(keyed_task(tmp_path).examples())
    assert [(e.id, e.question) for e in examples] == [
        ("q1", "Which vitamin prevents scurvy?"),
        ("q0", "Which organ pumps blood?"),
    ]


def test_choice_texts_given_as_a_mapping_are_listed_in_label_order(tmp_path):
    first = next(iter(keyed_task(tmp_path).examples()))
    assert first.gold == {"answers": ["B"], "answer_key": "B", "choices": {"label": ["A", "B"], "text": ["D", "C"]}}


def test_labels_beside_a_mapping_of_choice_texts_are_a_bad_record_saying_to_leave_them_out(tmp_path):
    bad = next(iter(keyed_task(tmp_path, labels=", labels: answer").examples()))
    assert str(bad) == (
        f"{tmp_path / 'd.json'} easy.q1 field 'answer': the choice texts are a mapping of label -> "
        "text, which gives the labels: leave labels out"
    )


def test_a_record_with_a_field_of_the_keys_name_is_a_bad_record_named_by_its_key(tmp_path):
    records = {"easy": {"q1": {**RECORDS["easy"]["q1"], "id": "other"}, "q0": RECORDS["easy"]["q0"]}}
    bad, good = keyed_task(tmp_path, records).examples()
    assert str(bad).startswith(f"{tmp_path / 'd.json'} easy.q1 field 'id': the record has a field 'id' of its own")
    assert good.id == "q0"


def test_a_record_that_is_not_an_object_is_a_bad_record(tmp_path):
    records = {"easy": {"q1": ["not", "a", "record"], "q0": RECORDS["easy"]["q0"]}}
    bad, good = keyed_task(tmp_path, records).examples()
    assert str(bad) == f"{tmp_path / 'd.json'} easy.q1: expected a record (a JSON object), got list"
    assert good.id == "q0"


def test_a_mapping_without_keys_as_is_refused_naming_the_option(tmp_path):
    with pytest.raises(
        ConfigError,
        match=r"expected a JSON list of records at 'easy', found dict; a mapping of key "
        r"-> record is read with data.keys_as \(e.g. keys_as: id\)$",
    ):
        list(keyed_task(tmp_path, keys="").examples())


def test_keys_as_over_a_list_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"expected a JSON mapping of key -> record at 'easy', found list$"):
        list(keyed_task(tmp_path, {"easy": [RECORDS["easy"]["q1"]]}).examples())


def test_a_key_the_mapping_repeats_is_a_bad_record_not_a_record_dropped(tmp_path):
    """JSON keeps a repeated key's last record: read as it is, the first would vanish from n uncounted."""
    from ragbench.api import RecordError

    record = json.dumps(RECORDS["easy"]["q0"])
    task = keyed_task(tmp_path)
    (tmp_path / "d.json").write_text(
        f'{{"easy": {{"q0": {record}, "q2": {record}, "q0": {record}}}}}', encoding="utf-8"
    )
    repeated, other = task.examples()
    assert isinstance(repeated, RecordError) and "holds key 'q0' more than once" in str(repeated)
    assert other.id == "q2"

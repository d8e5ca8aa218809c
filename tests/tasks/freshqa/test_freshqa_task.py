"""The freshqa task reads FreshQA's CSV as the FreshEval notebooks do: the third row is the header, every
non-empty answer_i is a gold answer; one split per run; its slices are fact_type, false_premise, num_hops."""

from __future__ import annotations

import pytest

from conftest import TEST_DATA, plugins_read_once
from ragbench.api import ConfigError, RecordError

SAMPLE = TEST_DATA / "freshqa" / "FreshQA_sample.csv"
FRESHQA = plugins_read_once().load("tasks", "freshqa")


def read(path=SAMPLE, **options):
    return list(FRESHQA(path, **options).examples())


def test_the_test_split_is_the_default_and_the_third_row_is_the_header():
    assert [(e.id, e.question) for e in read()] == [
        ("0", "Who founded the fishing town of Olm?"),
        ("1", "When did Olm send its first crew to the Moon?"),
        ("3", 'Which ferry, "the Sound line", crosses Kiribati Sound today?'),
    ]


def test_the_dev_split_is_an_option():
    assert [e.id for e in read(split="dev")] == ["2"]
    with pytest.raises(ConfigError, match="split must be one of test, dev, got 'train'"):
        FRESHQA(SAMPLE, split="train")


def test_the_gold_answers_are_the_non_empty_answer_columns_in_order():
    assert [e.gold["answers"] for e in read()] == [
        ["Ansgar Pell", "the brewer Ansgar Pell"],
        ["Olm has never sent a crew to the Moon."],
        ["the Olm ferry", "Olm ferry, opened in 1902"],
    ]
    assert read(split="dev")[0].gold["answers"] == ["42", "forty-two"]


def test_the_slices_are_fact_type_false_premise_and_num_hops():
    first, second, third = read()
    assert {k: first.meta[k] for k in ("fact_type", "false_premise", "num_hops")} == {
        "fact_type": "never-changing",
        "false_premise": "FALSE",
        "num_hops": "one-hop",
    }
    assert second.meta["false_premise"] == "TRUE" and third.meta["num_hops"] == "multi-hop"
    assert FRESHQA.spec.fields.slices.keys() == {"fact_type", "false_premise", "num_hops"}


def test_the_examples_carry_no_documents():
    assert all(e.docs == [] for e in read())


def test_a_row_of_no_split_and_a_row_without_answers_are_bad_records(tmp_path):
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace(",TEST,", ",TRAIN,")
    lines[4] = lines[4].replace("Olm has never sent a crew to the Moon.", "")
    path = tmp_path / "FreshQA.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    first, second, third = read(path)
    assert isinstance(first, RecordError) and "split 'TRAIN' is neither" in str(first) and ":4" in str(first)
    assert isinstance(second, RecordError) and "answer_0 ... answer_9 are all empty" in str(second)
    assert third.id == "3"


def test_the_blank_rows_a_spreadsheet_saves_after_the_questions_are_no_records(tmp_path):
    """pandas reads them as rows of NaN, which the notebooks' split selection leaves out: not bad records."""
    path = tmp_path / "FreshQA.csv"
    path.write_text(SAMPLE.read_text(encoding="utf-8") + ("," * 19 + "\n") * 3, encoding="utf-8")
    assert [example.id for example in read(path)] == [example.id for example in read()]


@pytest.mark.parametrize("old, new, column", [("answer_0", "answer0", "answer_0"), ("id,split,", "id,splat,", "split")])
def test_a_header_without_a_column_the_notebooks_read_is_one_line_naming_it(tmp_path, old, new, column):
    """Read without answer_0, every question's first answer would be lost from its gold."""
    path = tmp_path / "FreshQA.csv"
    path.write_text(SAMPLE.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    with pytest.raises(ConfigError, match=f"{path}: the header \\(data.header_row 2\\) has no column {column};"):
        read(path)

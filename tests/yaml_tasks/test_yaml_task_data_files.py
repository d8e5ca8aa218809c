"""A benchmark's own data file as the field writes them (docs/yaml-tasks.md): a byte order mark, CRLF
lines, quoted CSV values, a file named .gz that is not gzip, one cut short, a 10 MB record, numbers and
empty values as answers. Each loads as the file means it or is refused in one line naming the file,
the record and the field: never a traceback, never a silently wrong example."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path

import pytest

from ragbench.api import ConfigError, RecordError
from ragbench.api.yaml_tasks import yaml_task_class
from support.helpers import cli_here

RECORDS = [{"id": "a", "question": "Q1?", "answer": "x"}, {"id": "b", "question": "Q2?", "answer": "y"}]
JSONL = "".join(json.dumps(r) + "\n" for r in RECORDS)
CSV = "id,question,answer\na,Q1?,x\nb,Q2?,y\n"
EXPECTED = [("a", "Q1?", {"answers": ["x"]}), ("b", "Q2?", {"answers": ["y"]})]


def task_on(folder: Path, name: str, content: str | bytes, fields: str = "{gold: {answers: answer}}"):
    (folder / name).write_bytes(content.encode() if isinstance(content, str) else content)
    yaml = folder / "t.yaml"
    yaml.write_text(f"task: t\ndata: {{path: {name}}}\nfields: {fields}\nmetrics: [em]\n", encoding="utf-8")
    return yaml_task_class(yaml)()


def read(task) -> list:
    return [
        str(item) if isinstance(item, RecordError) else (item.id, item.question, item.gold) for item in task.examples()
    ]


# --- text encodings and line endings -------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,content",
    [
        ("d.jsonl", "\ufeff" + JSONL),
        ("d.json", "\ufeff" + json.dumps(RECORDS)),
        ("d.csv", "\ufeff" + CSV),
        ("d.jsonl", JSONL.replace("\n", "\r\n")),
        ("d.json", json.dumps(RECORDS, indent=1).replace("\n", "\r\n")),
        ("d.csv", CSV.replace("\n", "\r\n")),
    ],
    ids=["jsonl_bom", "json_bom", "csv_bom", "jsonl_crlf", "json_crlf", "csv_crlf"],
)
def test_a_byte_order_mark_or_crlf_lines_load_as_the_plain_file(tmp_path, name, content):
    assert read(task_on(tmp_path, name, content)) == EXPECTED  # csv_bom: the ids, not positions 0, 1


def test_a_csv_header_with_a_byte_order_mark_keeps_its_first_column(tmp_path):
    assert read(task_on(tmp_path, "d.csv", "\ufeffquestion,id,answer\nQ1?,a,x\n")) == [EXPECTED[0]]


def test_csv_header_names_are_read_without_the_spaces_around_them(tmp_path):
    assert read(task_on(tmp_path, "d.csv", "question , id, answer\nQ1?,a,x\n")) == [EXPECTED[0]]


@pytest.mark.parametrize(
    "content,problem",
    [
        (
            "id,question,answer,answer\na,Q1?,x,y\n",
            "the header names column 'answer' twice (columns 3 and 4); give each column its own name",
        ),
        (
            "id;question;answer\na;Q1?;x\n",
            "the header is one column 'id;question;answer': the file separates its values "
            "by ';', not ','; set data.delimiter: \";\"",
        ),
    ],
    ids=["repeated", "semicolons"],
)
def test_a_csv_header_that_cannot_be_meant_is_refused_naming_the_fix(tmp_path, content, problem):
    task = task_on(tmp_path, "d.csv", content)
    with pytest.raises(ConfigError) as error:
        read(task)
    assert str(error.value) == f"{tmp_path / 'd.csv'}:1: {problem}"


def test_quoted_csv_values_keep_their_commas_and_newlines(tmp_path):
    task = task_on(tmp_path, "d.csv", 'id,question,answer\na,"Q1, or\r\nnot?","x, y"\n')
    assert read(task) == [("a", "Q1, or\r\nnot?", {"answers": ["x, y"]})]


def test_a_csv_row_of_separators_only_is_no_record_as_a_blank_line_is_not(tmp_path):
    """A spreadsheet saved as CSV writes its blank rows as ",,": they are not records (bad ones, or examples)."""
    task = task_on(tmp_path, "d.csv", "id,question,answer\na,Q1?,x\n,,\n\nb,Q2?,y\n,,\n,\n")
    assert read(task) == [("a", "Q1?", {"answers": ["x"]}), ("b", "Q2?", {"answers": ["y"]})]


def test_a_csv_value_of_10_mb_is_read(tmp_path):
    context = "word " * 2_000_000
    task = task_on(
        tmp_path,
        "d.csv",
        f"id,question,answer,context\na,Q1?,x,{context}\nb,Q2?,y,\n",
        "{gold: {answers: answer}, inputs: {context: context}}",
    )
    examples = list(task.examples())
    assert [e.id for e in examples] == ["a", "b"] and examples[0].extras["context"] == context


@pytest.mark.parametrize(
    "content,where",
    [
        (
            "id,question,answer\na,Qu\xe9?,x\n".encode("latin-1"),
            "line 2 (byte offset 23) is not UTF-8 (invalid continuation byte, byte 0xe9)",
        ),
        (
            "id,question,answer\na,Q?,x\n".encode("utf-16"),
            "line 1 (byte offset 0) is not UTF-8 (invalid start byte, byte 0xff)",
        ),
    ],
    ids=["latin1", "utf16"],
)
def test_a_csv_file_not_in_utf8_is_refused_in_one_line_naming_its_line(tmp_path, content, where):
    task_on(tmp_path, "d.csv", content)
    result = cli_here("check", "--no-model", "--system", "closed_book", "--tasks", str(tmp_path / "t.yaml"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"ragbench: error: {tmp_path / 'd.csv'}: {where}; save the file as UTF-8"
    )


# --- compression ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,content", [("d.jsonl.gz", JSONL), ("d.json.bz2", json.dumps(RECORDS)), ("d.csv.gz", CSV), ("d.csv.bz2", CSV)]
)
def test_a_file_named_compressed_that_is_plain_text_is_read_as_it_is(tmp_path, name, content):
    assert read(task_on(tmp_path, name, content)) == EXPECTED


@pytest.mark.parametrize(
    "name,compress", [("d.csv.gz", gzip.compress), ("d.csv.bz2", lambda data: bz2.compress(data, compresslevel=1))]
)
def test_a_compressed_csv_cut_short_ends_in_one_bad_record_after_the_rows_read(tmp_path, name, compress):
    rows = "".join(f"r{i},Question {i}?,answer {i}\n" for i in range(20000))
    whole = compress(("id,question,answer\n" + rows).encode())
    items = read(task_on(tmp_path, name, whole[: len(whole) * 3 // 4]))
    *examples, last = items
    assert examples and all(isinstance(e, tuple) for e in examples)
    assert [e[0] for e in examples] == [f"r{i}" for i in range(len(examples))]
    assert last.startswith(f"{tmp_path / name}:{len(examples) + 2}: cannot read past this line (")
    assert last.endswith("): the file is cut short or corrupt")


@pytest.mark.parametrize(
    "content",
    ["id,question,answer\na,Q1?,x\nb,Q2", 'id,question,answer\na,Q1?,x\nb,"Q2?, or'],
    ids=["in_a_value", "in_a_quoted_value"],
)
def test_a_plain_csv_whose_last_line_is_cut_short_ends_in_a_bad_record_not_a_shorter_row(tmp_path, content):
    first, last = read(task_on(tmp_path, "d.csv", content))
    assert first == EXPECTED[0]
    assert last.startswith(f"{tmp_path / 'd.csv'}:3: the last line has ") and last.endswith(
        "no line end: the file is cut short"
    )


def test_short_rows_with_line_ends_and_a_full_last_row_without_one_are_rows(tmp_path):
    content = "id,question,answer,note\na,Q1?,x\nb,Q2?,y,n"
    assert read(task_on(tmp_path, "d.csv", content)) == EXPECTED


def test_a_check_of_a_cut_short_compressed_csv_is_one_line(tmp_path):
    whole = gzip.compress(CSV.encode())
    task_on(tmp_path, "d.csv.gz", whole[:20])
    result = cli_here("check", "--no-model", "--system", "closed_book", "--tasks", str(tmp_path / "t.yaml"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert (
        f"ragbench: error: task t: none of the first 1 record(s) of {tmp_path / 'd.csv.gz'} is usable (first: "
        f"{tmp_path / 'd.csv.gz'}:"
    ) in result.stderr


# --- answers and ids as the field writes them ----------------------------------------------------------
def jsonl(records: list) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


@pytest.mark.parametrize(
    "answer,gold",
    [
        (1, ["1"]),
        (1.0, ["1"]),
        (2.5, ["2.5"]),
        (1e20, ["100000000000000000000"]),
        ([3.0, "three"], ["3", "three"]),
        (["x", ""], ["x", ""]),
    ],
)
def test_a_number_answer_is_its_decimal_text_and_1_0_is_1(tmp_path, answer, gold):
    task = task_on(tmp_path, "d.jsonl", jsonl([{"id": "a", "question": "Q?", "answer": answer}]))
    assert read(task) == [("a", "Q?", {"answers": gold})]


def test_a_float_number_column_of_parquet_scores_1_against_1(tmp_path):
    """pandas writes an integer column with a null as floats: the gold is 3, not 3.0."""
    import pandas as pd

    pd.DataFrame({"id": ["a", "b"], "question": ["Q1?", "Q2?"], "answer": [3, None]}).to_parquet(tmp_path / "d.parquet")
    task = task_on(tmp_path, "d.parquet", (tmp_path / "d.parquet").read_bytes())
    assert read(task) == [
        ("a", "Q1?", {"answers": ["3"]}),
        f"{tmp_path / 'd.parquet'} row 1 field 'answer': null where a value is required",
    ]


@pytest.mark.parametrize(
    "text,problem",
    [
        (
            '{"id": "a", "question": "Q?", "answer": NaN}',
            "expected a string or a number, got nan (a null in a number column?)",
        ),
        ('{"id": "a", "question": "Q?", "answer": null}', "null where a value is required"),
        (
            '{"id": "a", "question": "Q?", "answer": ["x", null]}',
            "expected a string or a list of strings, got a list holding null",
        ),
        (
            '{"id": "a", "question": "Q?", "answer": [{"text": "x", "answer_start": 0}]}',
            "expected a string or a list of strings, got a list holding a mapping; name the key that holds it, e.g. "
            "'answer.text'",
        ),
        (
            '{"id": "a", "question": "Q?", "answer": "[\\"x\\", \\"y\\"]"}',
            'the text \'["x", "y"]\' is a list written as text; declare the path {path: answer, list: json}',
        ),
        ('{"id": true, "question": "Q?", "answer": "x"}', "expected an id (a string or a number), got true/false"),
        ('{"id": "", "question": "Q?", "answer": "x"}', "expected an id (a string or a number), got an empty string"),
        ('{"id": ["a"], "question": "Q?", "answer": "x"}', "expected an id (a string or a number), got a list"),
    ],
    ids=["nan", "null", "null_item", "squad_dicts", "list_as_text", "bool_id", "empty_id", "list_id"],
)
def test_an_answer_or_id_that_would_score_wrongly_is_a_bad_record_naming_the_field(tmp_path, text, problem):
    items = read(task_on(tmp_path, "d.jsonl", text + "\n"))
    field = "id" if '"id": "a"' not in text else "answer"
    assert items == [f"{tmp_path / 'd.jsonl'}:1 field '{field}': {problem}"]


def test_a_key_after_a_list_of_mappings_takes_it_from_each_as_squads_answers(tmp_path):
    record = {
        "id": "a",
        "question": "Q?",
        "answers": [{"text": "x", "answer_start": 0}, {"text": "y", "answer_start": 4}],
    }
    task = task_on(tmp_path, "d.jsonl", jsonl([record]), "{gold: {answers: answers.text}}")
    assert read(task) == [("a", "Q?", {"answers": ["x", "y"]})]


@pytest.mark.parametrize(
    "cell,form",
    [('"[""x"", ""y""]"', "json"), ("\"['x', 'y']\"", "json"), ("x | y", "'|'")],
    ids=["json", "pandas_repr", "separated"],
)
def test_a_csv_answer_list_is_read_as_the_path_declares_it(tmp_path, cell, form):
    task = task_on(
        tmp_path,
        "d.csv",
        f"id,question,answer\na,Q?,{cell}\n",
        f"{{gold: {{answers: {{path: answer, list: {form}}}}}}}",
    )
    assert read(task) == [("a", "Q?", {"answers": ["x", "y"]})]


def test_a_prompt_input_the_record_lacks_is_a_bad_record_and_an_optional_one_is_none(tmp_path):
    records = [
        {"id": "a", "question": "Q?", "answer": "x", "ctx": "C"},
        {"id": "b", "question": "Q?", "answer": "x", "ctx": None},
    ]
    task = task_on(tmp_path, "d.jsonl", jsonl(records), "{gold: {answers: answer}, inputs: {ctx: ctx}}")
    assert [getattr(i, "extras", str(i)) for i in task.examples()] == [
        {"ctx": "C"},
        f"{tmp_path / 'd.jsonl'}:2 field 'ctx': null where a value is required",
    ]
    task = task_on(
        tmp_path, "d.jsonl", jsonl(records), "{gold: {answers: answer}, inputs: {ctx: {path: ctx, optional: true}}}"
    )
    assert [e.extras for e in task.examples()] == [{"ctx": "C"}, {"ctx": None}]


def test_a_float_choice_index_is_its_integer_and_a_nan_label_is_a_bad_record(tmp_path):
    record = {"id": "a", "question": "Q?", "options": ["p", "q"], "key": 1.0}
    task = task_on(tmp_path, "d.jsonl", jsonl([record]), "{gold: {choices: {texts: options, answer_index: key}}}")
    assert read(task) == [("a", "Q?", {"answer_key": "B", "choices": {"label": ["A", "B"], "text": ["p", "q"]}})]
    task = task_on(tmp_path, "d.jsonl", '{"id": "a", "question": "Q?", "verdict": NaN}\n', "{gold: {label: verdict}}")
    assert read(task) == [f"{tmp_path / 'd.jsonl'}:1 field 'verdict': expected a single label, got NaN"]

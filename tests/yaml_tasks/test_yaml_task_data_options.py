"""A YAML task's `data` option that its data's format does not read is refused in one line naming it, the
format and the fix, not silently ignored."""

from __future__ import annotations

import json

import pytest

from ragbench.api import ConfigError
from ragbench.api.yaml_tasks import yaml_task_class
from ragbench.testing import installed_registry
from support.helpers import cli_here, cli_run_args

TEMPLATE = """task: opts
data: {data}
prompt:
  template: "Q: {{{{ question }}}}"
metrics: [em]
"""
RECORD = {"id": "q1", "question": "Q?", "answers": ["a"]}


def write(tmp_path, data: str):
    (tmp_path / "d.jsonl").write_text(json.dumps(RECORD) + "\n")
    (tmp_path / "d.csv").write_text("id,question,answers\nq1,Q?,a\n")
    (tmp_path / "d.json").write_text(json.dumps({"data": [RECORD]}))
    (tmp_path / "t.yaml").write_text(TEMPLATE.format(data=data))
    return tmp_path / "t.yaml"


@pytest.mark.parametrize(
    "data, option, fmt",
    [
        ("{path: d.csv, records: data}", "records", "csv"),
        ("{path: d.jsonl, delimiter: ';'}", "delimiter", "jsonl"),
        ("{path: d.json, records: data, delimiter: ';'}", "delimiter", "json"),
        ("{path: d.jsonl, split: validation}", "split", "jsonl"),
        ("{path: d.csv, config: distractor}", "config", "csv"),
        ("{path: d.jsonl, format: flashrag, records: data}", "records", "flashrag"),
        ("{path: d.jsonl, keys_as: id}", "keys_as", "jsonl"),
        ("{path: d.json, records: data, header_row: 2}", "header_row", "json"),
    ],
)
def test_an_option_the_format_does_not_read_is_refused_naming_it_and_the_format(tmp_path, data, option, fmt):
    task = yaml_task_class(write(tmp_path, data), None, formats=installed_registry().record_format)()
    with pytest.raises(
        ConfigError,
        match=rf"^task opts \(.*t.yaml\): data.{option} is read only with format "
        rf"\w+, and .*d\.\w+ is read as {fmt}: remove it, or give data.format ",
    ):
        task.prepare()


def test_a_revision_for_local_data_is_refused(tmp_path):
    task = yaml_task_class(write(tmp_path, "{path: d.jsonl, revision: main}"))()
    with pytest.raises(
        ConfigError,
        match=r"data.revision is read only for a hub dataset \(data.hf\), and .*d.jsonl "
        r"is a local one: remove it$",
    ):
        task.prepare()


def test_the_options_a_format_reads_are_accepted(tmp_path):
    task = yaml_task_class(write(tmp_path, "{path: d.json, records: data}"))()
    assert [e.id for e in task.examples()] == ["q1"]
    task = yaml_task_class(write(tmp_path, "{path: d.csv, delimiter: ','}"))()
    assert [e.id for e in task.examples()] == ["q1"]


def test_a_csv_header_row_below_title_rows_is_read_as_the_header(tmp_path):
    """header_row 2: the first two rows are a spreadsheet's title lines, not records (FreshQA's CSV); a
    quoted title with a newline in it is one row."""
    write(tmp_path, "{path: d.csv}")
    (tmp_path / "d.csv").write_text('"Title,\nover two lines",,\nnote,,\nid,question,answers\nq1,Q?,a\n')
    (tmp_path / "t.yaml").write_text(TEMPLATE.format(data="{path: d.csv, header_row: 2}"))
    task = yaml_task_class(tmp_path / "t.yaml")()
    assert [(e.id, e.question) for e in task.examples()] == [("q1", "Q?")]


def test_a_file_with_fewer_title_rows_names_header_row_in_its_one_line(tmp_path):
    """A data row read as the header repeats its empty cells' name: the fix may be header_row, not the names."""
    write(tmp_path, "{path: d.csv}")
    (tmp_path / "d.csv").write_text("note,,\nid,question,answers\nq1,,\nq2,Q?,a\n")
    (tmp_path / "t.yaml").write_text(TEMPLATE.format(data="{path: d.csv, header_row: 2}"))
    with pytest.raises(
        ConfigError,
        match=r"d.csv:3: the header names column '' twice .* or set data.header_row "
        r"\(now 2\) to the header's row$",
    ):
        list(yaml_task_class(tmp_path / "t.yaml")().examples())


def test_a_negative_header_row_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="header_row.*expected the header's row counted from 0, got -1"):
        yaml_task_class(write(tmp_path, "{path: d.csv, header_row: -1}"))


def test_data_given_with_dash_dash_data_is_read_without_the_files_options(tmp_path):
    """--data replaces the task file's data, not its options: those for the file's own data are not refused."""
    task = yaml_task_class(write(tmp_path, "{path: d.json, records: data}"))(data_path=tmp_path / "d.jsonl")
    assert [e.id for e in task.examples()] == ["q1"]


def test_the_refusal_is_one_line_of_ragbench_check(tmp_path):
    checked = cli_here(
        "check",
        *cli_run_args("scripted:echo", task=str(write(tmp_path, "{path: d.csv, records: data}"))),
        "--output",
        str(tmp_path / "run"),
        "--no-model",
    )
    assert checked.returncode == 2 and "Traceback" not in checked.stderr
    [line] = [line for line in checked.stderr.splitlines() if "data.records" in line]
    assert "data.records is read only with format json, and " in line and "d.csv is read as csv" in line

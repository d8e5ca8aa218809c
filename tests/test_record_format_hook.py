"""A benchmark's own layout of data files is a record format its folder registers (the
ragbench_record_formats hook), not a name the YAML loader knows: the core names none of FlashRAG's, SQuAD's
or WebQuestions', and a third-party plugin's format is read by a YAML task that names it."""
from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from ragbench.api import RecordFormat, RecordPlace, hookimpl, read_lines
from ragbench.testing import run_eval

from conftest import ROOT

BENCHMARK_FORMATS = ("flashrag", "squad", "webquestions")


class PipeFormat(RecordFormat):
    """One `question|answer` per line; the answer is the gold when the file maps none."""

    counts_lines = True
    default_gold = {"answers": "answer"}

    def read(self, path: Path) -> Iterator[tuple[RecordPlace, Any]]:
        for number, line in read_lines(path, loads=str):  # (line index, text) of each non-blank line
            place = RecordPlace(str(path), number, number + 1)
            question, _, answer = line.strip().partition("|")
            yield place, {"id": f"p{number}", "question": question, "answer": answer}


@hookimpl
def ragbench_record_formats() -> dict[str, Any]:
    return {"pipes": {"target": f"{__name__}:PipeFormat", "description": "question|answer lines"}}


def test_the_yaml_loader_names_no_benchmarks_format():
    """No string in the loader's code (its docstrings aside) is a benchmark's format name."""
    named = {}
    for path in (ROOT / "ragbench" / "_shared" / "yaml_tasks").glob("*.py"):
        tree = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
                      and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        found = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and id(node) not in docstrings
                 and isinstance(node.value, str) and node.value in BENCHMARK_FORMATS}
        if found:
            named[path.name] = sorted(found)
    assert named == {}


def test_a_yaml_task_reads_a_format_a_third_party_plugin_registers(tmp_path):
    (tmp_path / "qa.txt").write_text("Capital of France?|Paris\nCapital of Peru?|Lima\n")
    task_file = tmp_path / "pipes_task.yaml"
    task_file.write_text("task: pipes_task\ndata: {path: qa.txt, format: pipes}\n"
                         "prompt:\n  template: 'Q: {{ question }}'\nmetrics: [em]\n")
    result = run_eval(str(task_file), "closed_book", "scripted:echo", plugins=[sys.modules[__name__]])
    records = result.samples["pipes_task"]
    assert [(r.id, r.question, r.gold["answers"]) for r in records] == \
        [("p0", "Capital of France?", ["Paris"]), ("p1", "Capital of Peru?", ["Lima"])]
    assert result.complete and set(result.scores["pipes_task"]) >= {"em"}


def test_a_format_nobody_registers_is_refused_naming_the_files_line(tmp_path):
    (tmp_path / "qa.txt").write_text("Capital of France?|Paris\n")
    task_file = tmp_path / "pipes_task.yaml"
    task_file.write_text("task: pipes_task\ndata: {path: qa.txt, format: pipes}\n"
                         "prompt:\n  template: 'Q: {{ question }}'\nmetrics: [em]\n")
    with pytest.raises(Exception, match=r"pipes_task.yaml:2: key 'data.format': record format 'pipes' is not installed"):
        run_eval(str(task_file), "closed_book", "scripted:echo")

"""A benchmark's own layout of data files and its own kind of gold are registered by its folder (the
ragbench_record_formats and ragbench_gold_kinds hooks), not names the YAML loader knows: the core names none
of FlashRAG's, SQuAD's or WebQuestions' formats nor CRAG's gold, and a third-party plugin's format and gold
kind are read by a YAML task that names them."""

from __future__ import annotations

import ast
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from ragbench.api import RecordError, hookimpl
from ragbench.api.data import read_lines
from ragbench.api.yaml_tasks import GoldKind, GoldReader, RecordFormat, RecordPlace
from ragbench.testing import Registry, installed_registry, run_eval

BENCHMARK_NAMES = ("flashrag", "squad", "webquestions", "crag_answer")


class PipeFormat(RecordFormat):
    """One `question|answer` per line; the answer is the gold when the file maps none."""

    counts_lines = True
    default_gold = {"answers": "answer"}

    def read(self, path: Path) -> Iterator[tuple[RecordPlace, Any]]:
        for number, line in read_lines(path, loads=str):  # (line index, text) of each non-blank line
            place = RecordPlace(str(path), number, number + 1)
            question, _, answer = line.strip().partition("|")
            yield place, {"id": f"p{number}", "question": question, "answer": answer}


class Ranked(GoldKind):
    """A best answer and its runners-up; the references are the best first."""

    parts = ("best", "others")

    def gold(self, read: GoldReader) -> dict[str, Any]:
        return {"best": read.text("best"), "others": (read.texts("others") or []) if read.has("others") else []}

    def references(self, gold: dict[str, Any]) -> list[str]:
        return [gold["best"], *gold["others"]]


@hookimpl
def ragbench_record_formats() -> dict[str, Any]:
    return {"pipes": {"target": f"{__name__}:PipeFormat", "description": "question|answer lines"}}


@hookimpl
def ragbench_gold_kinds() -> dict[str, Any]:
    return {"ranked": {"target": f"{__name__}:Ranked", "description": "a best answer and its runners-up"}}


def test_the_yaml_loader_names_no_benchmarks_format():
    """No string in the loader's code (its docstrings aside) is a benchmark's format name."""
    named = {}
    for path in (ROOT / "ragbench" / "_yaml_tasks").glob("*.py"):
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        found = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and id(node) not in docstrings
            and isinstance(node.value, str)
            and node.value in BENCHMARK_NAMES
        }
        if found:
            named[path.name] = sorted(found)
    assert named == {}


def test_each_benchmarks_formats_and_gold_kinds_are_registered_by_its_own_folder():
    """By the registrations.yaml of the folder whose code they are, not by the shared catalogue (registry.yaml)."""
    registry, shared = installed_registry(), (ROOT / "registry.yaml").read_text(encoding="utf-8")
    for entry in [*registry.record_formats.values(), *registry.gold_kinds.values()]:
        folder = entry.target.removeprefix("ragbench.tasks.").split(".")[0]
        own = yaml.safe_load((ROOT / "tasks" / folder / "registrations.yaml").read_text(encoding="utf-8"))
        assert own[entry.kind][entry.name]["target"] == entry.target and entry.target not in shared, entry.name
    assert set(registry.record_formats) | set(registry.gold_kinds) == set(BENCHMARK_NAMES)


def test_a_yaml_task_reads_a_format_a_third_party_plugin_registers(tmp_path):
    (tmp_path / "qa.txt").write_text("Capital of France?|Paris\nCapital of Peru?|Lima\n")
    task_file = tmp_path / "pipes_task.yaml"
    task_file.write_text(
        "task: pipes_task\ndata: {path: qa.txt, format: pipes}\n"
        "prompt:\n  template: 'Q: {{ question }}'\nmetrics: [em]\n"
    )
    result = run_eval(str(task_file), "closed_book", "scripted:echo", plugins=[sys.modules[__name__]])
    records = result.samples["pipes_task"]
    assert [(r.id, r.question, r.gold["answers"]) for r in records] == [
        ("p0", "Capital of France?", ["Paris"]),
        ("p1", "Capital of Peru?", ["Lima"]),
    ]
    assert result.complete and set(result.scores["pipes_task"]) >= {"em"}


def test_a_format_nobody_registers_is_refused_naming_the_files_line(tmp_path):
    (tmp_path / "qa.txt").write_text("Capital of France?|Paris\n")
    task_file = tmp_path / "pipes_task.yaml"
    task_file.write_text(
        "task: pipes_task\ndata: {path: qa.txt, format: pipes}\n"
        "prompt:\n  template: 'Q: {{ question }}'\nmetrics: [em]\n"
    )
    with pytest.raises(
        Exception, match=r"pipes_task.yaml:2: key 'data.format': record format 'pipes' is not installed"
    ):
        run_eval(str(task_file), "closed_book", "scripted:echo")


def test_a_yaml_task_maps_a_gold_kind_a_third_party_plugin_registers(tmp_path):
    (tmp_path / "qa.jsonl").write_text(
        '{"id": "a", "question": "Largest planet?", "top": "Jupiter", "rest": ["Saturn"]}\n'
        '{"id": "b", "question": "Smallest planet?", "top": 1}\n'
        '{"id": "c", "question": "Hottest planet?", "rest": ["Venus"]}\n'
    )
    task_file = tmp_path / "ranked_task.yaml"
    task_file.write_text(
        "task: ranked_task\ndata: {path: qa.jsonl}\nfields:\n  gold:\n"
        "    ranked: {best: top, others: rest}\nprompt:\n  template: 'Q: {{ question }}'\nmetrics: [em]\n"
    )
    registry = Registry.discover(plugins=[(__name__, "the test", sys.modules[__name__])])
    task = registry.load("tasks", registry.add_task_file(task_file))()
    first, second, third = task.examples()
    assert first.gold == {"best": "Jupiter", "others": ["Saturn"]} and second.gold == {"best": "1", "others": []}
    assert task.gold_references(first.gold) == ["Jupiter", "Saturn"] and task.scoring.gold_fields == ("ranked",)
    assert isinstance(third, RecordError) and str(third).endswith("qa.jsonl:3 field 'top': missing field")


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=30)
@given(answer=texts, alternatives=st.one_of(st.none(), st.lists(texts, max_size=3)))
def test_crag_answer_registered_by_crags_folder_keeps_every_text(answer, alternatives):
    record = {
        "id": "q",
        "question": "When?",
        "ans": answer,
        **({"alts": alternatives} if alternatives is not None else {}),
    }
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "d.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
        task_file = Path(folder) / "crag_like.yaml"
        task_file.write_text(
            "task: crag_like\ndata: {path: d.jsonl}\nfields:\n  gold:\n"
            "    crag_answer: {answer: ans, alt_ans: alts}\nprompt:\n  template: '{{ question }}'\n"
            "metrics: [em]\n"
        )
        registry = installed_registry()
        task = registry.load("tasks", registry.add_task_file(task_file))()
        (example,) = task.examples()
    assert example.gold == {"answer": answer, "alt_ans": alternatives or []}
    assert task.gold_references(example.gold) == [answer, *(alternatives or [])]

"""The matrix's task groups (tests/support/matrix_groups.py): a task a system would meet as it meets another joins that
task's group; one that declares anything new (prompt style, record format, answer format, documents, metric,
metric option) is a group of its own, whatever its name, so that every system runs on it."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from conftest import plugins_read_once
from ragbench.testing import installed_registry
from support.matrix_groups import task_groups

# nq_open_flashrag's file (tasks/open_qa), without its comments and description
NQ_OPEN_FLASHRAG = """task: {name}
data: {{file: flashrag_nq_test.jsonl, format: flashrag}}
prompt: {{style: flashrag}}
postprocess: [strip]
metrics: [em, hotpot_f1, cover_em]
system_args: {{max_tokens: 32, top_n: 5}}
"""
CHANGES = {
    "prompt style": ("prompt: {style: flashrag}", "prompt: {template: 'Q: {{ question }}'}"),
    "record format": ("format: flashrag", "format: jsonl"),
    "answer format": ("postprocess: [strip]", "answer_format: long\npostprocess: [strip]"),
    "documents": ("format: flashrag}", "format: flashrag}\nfields: {question: question, documents: {path: ctxs}}"),
    "metric": ("cover_em]", "cover_em, token_pr]"),
    "metric option": ("[em,", "[{name: em, args: {regex: true}},"),
}


def groups_with(tmp_path, text: str, name: str = "zz_copy") -> dict[str, list[str]]:
    registry = installed_registry()
    task_file = tmp_path / "task.yaml"
    task_file.write_text(text, encoding="utf-8")
    registry.add_task_file(task_file)
    return task_groups(registry, ["nq_open_flashrag", "triviaqa_flashrag", name])


def test_a_task_declared_as_another_joins_its_group(tmp_path):
    groups = groups_with(tmp_path, NQ_OPEN_FLASHRAG.format(name="zz_copy"))
    assert groups == {"nq_open_flashrag": ["triviaqa_flashrag", "zz_copy"]}


@pytest.mark.parametrize("change", CHANGES)
def test_a_task_declaring_something_new_is_a_group_of_its_own(change, tmp_path):
    old, new = CHANGES[change]
    text = NQ_OPEN_FLASHRAG.format(name="zz_copy")
    assert old in text
    groups = groups_with(tmp_path, text.replace(old, new))
    assert groups == {"nq_open_flashrag": ["triviaqa_flashrag"], "zz_copy": []}


@settings(max_examples=25)
@given(
    name=st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,23}", fullmatch=True),  # names ragbench takes
    change=st.sampled_from([None, *CHANGES]),
)
def test_the_group_of_a_task_does_not_depend_on_its_name(name, change):
    """Any name: a copy of nq_open_flashrag's declaration is in its group; a copy declaring something new alone."""
    assume(name not in plugins_read_once().entries["tasks"] and not name.endswith((".yaml", ".yml")))
    text = NQ_OPEN_FLASHRAG.format(name=json.dumps(name))
    if change is not None:
        text = text.replace(*CHANGES[change])
    with tempfile.TemporaryDirectory() as folder:
        groups = groups_with(Path(folder), text, name)
    members = sorted([name, "nq_open_flashrag", "triviaqa_flashrag"])
    alike = {members[0]: members[1:]}  # the first by name represents the group
    apart = {"nq_open_flashrag": ["triviaqa_flashrag"], name: []}
    assert groups == (alike if change is None else apart)

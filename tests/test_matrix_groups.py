"""The matrix's task groups (tests/matrix_groups.py): a task a system would meet as it meets another joins that
task's group; one that declares anything new (prompt style, record format, answer format, documents, metric,
metric option) is a group of its own, whatever its name, so that every system runs on it."""
from __future__ import annotations

import pytest
from matrix_groups import task_groups

from ragbench._registry import installed_registry

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


def groups_with(tmp_path, text: str) -> dict[str, list[str]]:
    registry = installed_registry()
    task_file = tmp_path / "task.yaml"
    task_file.write_text(text, encoding="utf-8")
    registry.add_task_file(task_file)
    return task_groups(registry, ["nq_open_flashrag", "triviaqa_flashrag", "zz_copy"])


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

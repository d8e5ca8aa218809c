"""The `ragchecker` task (tasks/ragchecker/ragchecker.yaml): RAGChecker's benchmark queries, prompted and cut as
rag_baselines/generation.py does (tests/data/parity/ragchecker.json, `benchmark_generation`, says how)."""

from __future__ import annotations

import json

import pytest

from conftest import TEST_DATA
from ragbench.api import Document
from ragbench.testing import installed_registry

GENERATION = json.loads((TEST_DATA / "parity" / "ragchecker.json").read_text(encoding="utf-8"))["benchmark_generation"]


def planned_task(data: str):
    """The task as a run with `--data ragchecker=DATA` makes it."""
    return installed_registry().load("tasks", "ragchecker")(data_path=data)


@pytest.fixture
def queries(tmp_path):
    """A domain's queries file in data_process.sh's layout, holding the parity example."""
    path = tmp_path / "kiwi_queries.json"
    path.write_text(
        json.dumps(
            {
                "input_data": [
                    {**GENERATION["example"], "extra": 1},
                    {"query_id": "8", "query": "Who named the Oskel?", "gt_answer": "King Osk."},
                ]
            }
        ),
        encoding="utf-8",
    )
    return str(path)


def test_a_domains_queries_become_examples_with_their_gold_answer(queries):
    examples = list(planned_task(queries).examples())
    assert [(e.id, e.question, e.gold["answers"]) for e in examples] == [
        ("7", GENERATION["example"]["query"], [GENERATION["example"]["gt_answer"]]),
        ("8", "Who named the Oskel?", ["King Osk."]),
    ]


def test_the_prompt_is_generation_pys_over_the_chunks_shown(queries):
    task = planned_task(queries)
    example = next(iter(task.examples()))
    docs = [Document(id=f"c{i}", title="", text=text) for i, text in enumerate(GENERATION["chunks"])]
    prompt = task.prompting.build_prompt(example, docs)
    [message] = GENERATION["messages"]
    sent = prompt if isinstance(prompt, str) else prompt[-1]["content"]
    assert sent == message["content"]


@pytest.mark.parametrize("raw", list(GENERATION["format_response"]))
def test_the_answer_is_cut_out_of_its_tags_as_format_response_does(queries, raw):
    assert planned_task(queries).prompting.postprocess(raw) == GENERATION["format_response"][raw]

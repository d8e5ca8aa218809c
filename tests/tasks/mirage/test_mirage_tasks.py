"""MIRAGE's five sets (tasks/mirage): each task reads its set of one benchmark.json, and prompts as MedRAG
does - the CoT messages without documents, the RAG messages over the documents shown - equal to MedRAG's
src/template.py rendered as medrag.py renders it (tests/data/parity/mirage.json says how)."""

from __future__ import annotations

import json

import pytest

from conftest import TEST_DATA
from ragbench.api import Document, Example
from ragbench.testing import installed_registry, run_eval
from support.matrix_fixtures import cell_config

BENCHMARK = TEST_DATA / "mirage" / "benchmark.json"
SETS = {
    "mirage_mmlu": "mmlu",
    "mirage_medqa": "medqa",
    "mirage_medmcqa": "medmcqa",
    "mirage_pubmedqa": "pubmedqa",
    "mirage_bioasq": "bioasq",
}
PROMPTS = json.loads((TEST_DATA / "parity" / "mirage.json").read_text(encoding="utf-8"))["prompts"]


def planned_task(name: str):
    """The task as a run with `--data NAME=benchmark.json` makes it."""
    return installed_registry().load("tasks", name)(data_path=str(BENCHMARK))


def test_the_mirage_group_runs_the_five_sets():
    assert sorted(installed_registry().groups["mirage"]) == sorted(SETS)


@pytest.mark.parametrize("name", SETS)
def test_each_task_reads_its_set_of_benchmark_json_keyed_by_id(name):
    records = json.loads(BENCHMARK.read_text(encoding="utf-8"))[SETS[name]]
    examples = list(planned_task(name).examples())
    assert [(e.id, e.question, e.gold["answer_key"]) for e in examples] == [
        (key, record["question"], record["answer"]) for key, record in records.items()
    ]
    assert [dict(zip(e.gold["choices"]["label"], e.gold["choices"]["text"])) for e in examples] == [
        record["options"] for record in records.values()
    ]


def parity_example() -> Example:
    options = PROMPTS["options"]
    labels = sorted(options)
    return Example(
        id="p",
        question=PROMPTS["question"],
        gold={"answers": ["B"], "answer_key": "B", "choices": {"label": labels, "text": [options[k] for k in labels]}},
    )


def test_without_documents_the_prompt_is_medrag_cot():
    assert planned_task("mirage_medqa").prompting.build_prompt(parity_example()) == PROMPTS["cot"]


def test_over_documents_the_prompt_is_medrag_rag_numbering_them_from_zero():
    docs = [Document(id=str(i), title=s["title"], text=s["content"]) for i, s in enumerate(PROMPTS["snippets"])]
    assert planned_task("mirage_medqa").prompting.build_prompt(parity_example(), docs) == PROMPTS["medrag"]


def test_systems_writing_their_own_prompts_get_question_and_options_as_i_medrag_poses_them():
    assert planned_task("mirage_medqa").prompting.query_text(parity_example()) == PROMPTS["i_medrag_question"]


def test_a_run_reports_how_many_outputs_named_no_option(tmp_path):
    """The matrix cell's scripted model answers the second question "zzz": scored as A, and counted."""
    config = cell_config("mirage_bioasq", "closed_book", tmp_path)
    results = run_eval(config.pop("tasks"), config.pop("system"), config.pop("model"), **config).results
    assert results["details"]["mirage_bioasq"]["mirage_accuracy"]["value"] == 0.5
    assert results["counted"]["mirage_bioasq"]["mirage_accuracy"]["mirage_no_option_found"]["count"] == 1


@pytest.mark.parametrize(
    "record, field",
    [
        ({"options": {"A": "a", "B": "b", "C": "c", "D": "d", "E": "e"}, "answer": "E"}, "answer"),  # answer2idx: A-D
        ({"options": {"A": "a", "B": "b", "C": "c", "D": "d"}, "answer": "b"}, "answer"),
        ({"options": {"A": "a", "B": "b", "C": "c"}, "answer": "D"}, "answer"),
        ({"options": ["a", "b", "c", "d"], "answer": "A"}, "options"),  # medrag_answer lists options.keys()
        ({"options": "A. a B. b", "answer": "A"}, "options"),
    ],
)
def test_a_record_evaluate_py_cannot_score_is_a_bad_record_naming_the_field(tmp_path, record, field):
    """An answer key no option has (or one past D, where evaluate.py stops) can never be credited: not a 0."""
    from ragbench.api import RecordError

    path = tmp_path / "benchmark.json"
    path.write_text(json.dumps({"medqa": {"q1": {"question": "Which?", **record}}}), encoding="utf-8")
    [outcome] = list(installed_registry().load("tasks", "mirage_medqa")(path).examples())
    assert isinstance(outcome, RecordError) and f"field '{field}'" in str(outcome) and "medqa.q1" in str(outcome)

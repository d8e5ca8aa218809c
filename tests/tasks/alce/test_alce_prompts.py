"""ALCE prompts, shown documents and output cleanup against upstream run.py (fixtures record how)."""

from __future__ import annotations

import json

import pytest

from conftest import shared_reference
from ragbench.api import Document
from ragbench.tasks.alce.prompting import choose_demos, load_prompt_file
from ragbench.tasks.alce.tasks import AlceAsqa, AlceEli5, AlceQampari
from support.alce_helpers import ALCE_DATA, DATA_FILES, fixture
from support.helpers import run, samples

TASKS = {"asqa": AlceAsqa, "qampari": AlceQampari, "eli5": AlceEli5}
RUNS = [(dataset, run_) for dataset in TASKS for run_ in fixture(dataset)["runs"]]


def task_for(dataset: str, run_: dict):
    variant = "sum_or_ext" if run_["use_shorter"] else run_["variant"]
    return TASKS[dataset](
        data_path=ALCE_DATA / DATA_FILES[dataset],
        variant=variant,
        use_shorter=run_["use_shorter"],
        shot=run_["shot"],
        ndoc=run_["ndoc"],
        seed=run_["seed"],
    )


def run_id(case) -> str:
    dataset, run_ = case
    return f"{dataset}-{run_['variant']}-shot{run_['shot']}-ndoc{run_['ndoc']}-seed{run_['seed']}"


@pytest.mark.parametrize("case", RUNS, ids=run_id)
def test_prompt_equals_run_py_byte_for_byte(case):
    dataset, run_ = case
    task = task_for(dataset, run_)
    for example, item in zip(task.examples(), run_["items"]):
        shown = example.docs[: run_["ndoc"]]
        assert task.prompting.build_prompt(example, shown) == item["prompt"]


@pytest.mark.parametrize("case", RUNS, ids=run_id)
def test_documents_shown_are_run_py_doc_list(case):
    dataset, run_ = case
    task = task_for(dataset, run_)
    for example, item in zip(task.examples(), run_["items"]):
        shown = example.docs[: run_["ndoc"]]
        assert [(d.title, d.text) for d in shown] == [(d["title"], d["text"]) for d in item["docs"]]
        if run_["use_shorter"]:
            assert [d.metadata[run_["use_shorter"]] for d in shown] == [d[run_["use_shorter"]] for d in item["docs"]]


@pytest.mark.parametrize("dataset", TASKS)
def test_output_cleanup_equals_run_py_then_eval_py_truncation(dataset):
    data = fixture(dataset)
    task = TASKS[dataset](data_path=ALCE_DATA / DATA_FILES[dataset])
    saved_outputs = TASKS[dataset](data_path=ALCE_DATA / DATA_FILES[dataset], run_py_cleanup=False)
    for raw, item in zip(data["raw_outputs"], data["runs"][0]["items"]):
        saved = item["output"]  # what run.py wrote
        expected = saved.strip().split("\n")[0].replace("<|im_end|>", "")  # eval.py
        assert task.prompting.postprocess(raw) == expected
        assert saved_outputs.prompting.postprocess(saved) == expected


def test_run_py_cleanup_is_not_idempotent_on_a_doubled_end():
    saved = AlceEli5().prompting.postprocess("Text [1]. End.End.")
    assert saved == "Text [1]. End."
    assert AlceEli5().prompting.postprocess(saved) == "Text [1]."
    assert AlceEli5(run_py_cleanup=False).prompting.postprocess(saved) == saved


def test_demo_choice_is_numpy_legacy_rng():
    assert choose_demos(4, 1, 42) == [1]
    assert choose_demos(4, 2, 42) == [1, 3]
    assert choose_demos(4, 2, 43) != choose_demos(4, 2, 44)


def test_shipped_prompt_files_are_byte_copies_of_alce():
    reference = shared_reference() / "alce" / "prompts"
    for dataset in TASKS:
        for variant in ("default", "light_inst", "closedbook", "sum_or_ext"):
            ours = load_prompt_file(dataset, variant)
            theirs = json.loads((reference / f"{dataset}_{variant}.json").read_text(encoding="utf-8"))
            assert (ours.instruction, ours.demo_sep, ours.demo_prompt, ours.doc_prompt, list(ours.demos)) == (
                theirs["instruction"],
                theirs["demo_sep"],
                theirs["demo_prompt"],
                theirs["doc_prompt"],
                theirs["demos"],
            )


def test_mit_license_ships_beside_the_prompt_files():
    from importlib import resources

    text = resources.files("ragbench.tasks.alce").joinpath("prompts", "LICENSE").read_text(encoding="utf-8")
    assert "MIT License" in text and "Princeton Natural Language Processing" in text


def test_closedbook_instruction_keeps_its_trailing_space():
    assert load_prompt_file("asqa", "closedbook").instruction.endswith("tone. ")


def test_demo_answer_follows_answer_colon_without_space():
    task = AlceAsqa(data_path=ALCE_DATA / DATA_FILES["asqa"], shot=1, ndoc=2)
    example = next(iter(task.examples()))
    prompt = task.prompting.build_prompt(example, example.docs[:2])
    demo = load_prompt_file("asqa", "default").demos[1]  # seed 42, one shot
    assert "\n\nAnswer:" + demo["answer"] + "\n\n\n" in prompt and prompt.endswith("\nAnswer:")


def test_sub_questions_replace_the_test_question_only():
    task = AlceAsqa(data_path=ALCE_DATA / DATA_FILES["asqa"], shot=1, use_sub_questions=True)
    example = next(iter(task.examples()))
    prompt = task.prompting.build_prompt(example, example.docs[:5])
    sub_questions = "\n".join(p["question"] for p in example.gold["qa_pairs"])
    assert prompt.split("\n\n\n")[-1].startswith(
        load_prompt_file("asqa", "default").instruction + "\n\nQuestion: " + sub_questions + "\n\nDocument [1]"
    )
    assert "Question: When did the us break away from england?\n" in prompt.split("\n\n\n")[0]


def test_chat_prompt_has_alce_system_message():
    messages = AlceEli5().prompting.chat_messages("P")
    assert messages == [
        {
            "role": "system",
            "content": "You are a helpful assistant that answers the following questions with proper citations.",
        },
        {"role": "user", "content": "P"},
    ]


def test_more_documents_than_ndoc_is_an_error_naming_both_options():
    task = AlceAsqa(data_path=ALCE_DATA / DATA_FILES["asqa"], ndoc=3)
    example = next(iter(task.examples()))
    with pytest.raises(ValueError, match="ndoc=3.*--task-arg ndoc=5"):
        task.prompting.build_prompt(example, example.docs[:5])


def test_closedbook_prompt_with_documents_is_an_error():
    task = AlceAsqa(data_path=ALCE_DATA / DATA_FILES["asqa"], variant="closedbook")
    example = next(iter(task.examples()))
    with pytest.raises(ValueError, match="closed_book"):
        task.prompting.build_prompt(example, example.docs[:1])


def test_citations_are_parsed_per_statement():
    assert AlceAsqa().prompting.citations("A [1][2]. B. C [3, 4] and [0].") == [[1, 2], [], [3, 0]]
    assert AlceQampari().prompting.citations("X [1], Y, Z [2][3].") == [[1], [], [2, 3]]


def write_calls(path, dataset: str, run_: dict, raw_outputs: list[str]) -> None:
    system = AlceAsqa().prompting.chat_messages("")[0]
    with path.open("w", encoding="utf-8") as handle:
        for item, raw in zip(run_["items"], raw_outputs):
            messages = [system, {"role": "user", "content": item["prompt"]}]
            handle.write(json.dumps({"messages": messages, "response": raw}) + "\n")


@pytest.mark.parametrize("dataset", TASKS)
def test_vanilla_sends_alce_prompts_and_records_the_shown_docs(tmp_path, dataset):
    data = fixture(dataset)
    run_ = data["runs"][0]  # default variant, shot 2, ndoc 5, seed 42: the registry defaults
    write_calls(tmp_path / "calls.jsonl", dataset, run_, data["raw_outputs"])
    name = f"alce_{dataset}"
    results = run(
        tmp_path,
        tasks=[name],
        system="vanilla",
        model=f"replay:{tmp_path / 'calls.jsonl'}",
        data={name: str(ALCE_DATA / DATA_FILES[dataset])},
        task_args={"citations": False, **({"claims_nli": False} if dataset == "eli5" else {})},
    )
    assert results["complete"], results["counts"]
    for sample, item in zip(samples(tmp_path / "run", name), run_["items"]):
        assert [d["title"] for d in sample["prediction"]["docs"]] == [d["title"] for d in item["docs"]]
        assert sample["prediction"]["answer"] == item["output"].strip().split("\n")[0].replace("<|im_end|>", "")


def test_document_from_dict_keeps_upstream_extra_fields():
    doc = Document.from_dict({"id": 7, "title": "T", "text": "x", "summary": "s", "score": "1.5"})
    assert (doc.id, doc.score, doc.metadata) == ("7", 1.5, {"summary": "s"})
    assert Document.from_dict(doc.to_dict()) == doc

"""KILT's dev sets as YAML tasks (tasks/kilt): each loads its sample - ragbench's own made-up records in
KILT's exact JSONL format (tests/data/kilt, named as KILT's configs name the dev files) - maps answers and
provenance from every output that has them, renders its prompt, and is scored by KILT's metrics."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ROOT, TEST_DATA
from ragbench.testing import Registry, installed_registry
from support.helpers import run, samples

SAMPLES = TEST_DATA / "kilt"
SHIPPED = sorted(path.stem for path in (ROOT / "tasks" / "kilt").glob("*.yaml"))
# KILT's kilt/configs/dev_data.json: every dev file, by the task that reads it
DEV_FILES = {
    "kilt_fever": "fever-dev-kilt.jsonl",
    "kilt_aidayago2": "aidayago2-dev-kilt.jsonl",
    "kilt_wned": "wned-dev-kilt.jsonl",
    "kilt_cweb": "cweb-dev-kilt.jsonl",
    "kilt_zsre": "structured_zeroshot-dev-kilt.jsonl",
    "kilt_trex": "trex-dev-kilt.jsonl",
    "kilt_nq": "nq-dev-kilt.jsonl",
    "kilt_hotpotqa": "hotpotqa-dev-kilt.jsonl",
    "kilt_triviaqa": "triviaqa-dev-kilt.jsonl",
    "kilt_eli5": "eli5-dev-kilt.jsonl",
    "kilt_wow": "wow-dev-kilt.jsonl",
}


def records(task: str) -> list[dict]:
    return [json.loads(line) for line in (SAMPLES / DEV_FILES[task]).read_text(encoding="utf-8").splitlines()]


def first_answer(record: dict) -> str:
    return next(output["answer"] for output in record["output"] if "answer" in output)


def kilt_run(tmp_path: Path, task: str, name: str = "run", **config) -> dict:
    results = run(tmp_path, name, tasks=[task], data={task: str(SAMPLES / DEV_FILES[task])}, **config)
    assert results["counts"][task]["failed"] == 0 and results["counts"][task]["bad_records"] == 0
    return results["results"][task]


def test_the_group_kilt_is_the_eleven_dev_sets_each_reading_its_kilt_file():
    registry = Registry.discover()
    assert set(registry.expand_tasks(["kilt"])) == set(SHIPPED) == set(DEV_FILES)
    for task in SHIPPED:
        assert f"file: {DEV_FILES[task]}" in (ROOT / "tasks" / "kilt" / f"{task}.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize("task", sorted(DEV_FILES))
def test_each_task_prompts_with_its_input_and_scores_a_gold_answer_1_without_pages(tmp_path, task):
    """Closed book, a scripted model giving each record's first gold answer: every downstream value 1, and,
    no page shown, R-precision 0 and so every KILT-score 0."""
    rules = [
        {"pattern": re.escape(record["input"].splitlines()[-1][:40]), "response": first_answer(record)}
        for record in records(task)
    ]
    (tmp_path / "rules.json").write_text(json.dumps(rules), encoding="utf-8")
    values = kilt_run(tmp_path, task, system="closed_book", model=f"scripted:{tmp_path / 'rules.json'}")
    assert {key: values[key] for key in ("accuracy", "em", "f1", "rprec", "recall_at_5", "kilt_em")} == pytest.approx(
        {"accuracy": 1, "em": 1, "f1": 1, "rprec": 0, "recall_at_5": 0, "kilt_em": 0}
    )


def test_answers_and_provenance_come_from_every_output_that_has_them(tmp_path):
    predictions = tmp_path / "predictions.jsonl"
    # -7016: the gold page 90001 shown (twice, as two passages of it) after another page; -7017: not shown
    lines = [
        {
            "id": "-7016",
            "output": "Pell",
            "docs": [
                {"id": "90001_0", "title": "Olm", "text": "...", "wikipedia_id": "90001"},
                {"id": "90009_0", "title": "Trask", "text": "...", "wikipedia_id": "90009"},
                {"id": "90001_1", "title": "Olm", "text": "...", "wikipedia_id": "90001"},
            ],
        },
        {
            "id": "-7017",
            "output": "Evermouth",
            "docs": [{"id": "90009_0", "title": "Trask", "text": "...", "wikipedia_id": "90009"}],
        },
    ]
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    values = kilt_run(tmp_path, "kilt_nq", system="recorded", system_args={"path": str(predictions)})
    first = samples(tmp_path / "run", "kilt_nq")[0]
    assert first["gold"]["answers"] == ["Ansgar Pell", "Pell"]  # the provenance-only output has none
    pages = [[item["wikipedia_id"] for item in evidence] for evidence in first["gold"]["provenance"]]
    assert pages == [["90001"], ["90001"]]
    # -7016: R-precision 1 (its first page is a gold one), so its em counts: KILT-em 1; -7017: 0
    assert {key: values[key] for key in ("em", "rprec", "recall_at_5", "kilt_em", "kilt_accuracy")} == pytest.approx(
        {"em": 1, "rprec": 0.5, "recall_at_5": 0.5, "kilt_em": 0.5, "kilt_accuracy": 0.5}
    )


def test_fever_reads_the_verdict_out_of_the_reply_only_when_asked(tmp_path):
    rules = [
        {"pattern": "fishing town", "response": "SUPPORTS, it is."},
        {"pattern": "no capital", "response": "Refutes"},
    ]
    (tmp_path / "rules.json").write_text(json.dumps(rules), encoding="utf-8")
    model = f"scripted:{tmp_path / 'rules.json'}"
    assert kilt_run(tmp_path, "kilt_fever", system="closed_book", model=model)["accuracy"] == 0  # as eval_downstream.py
    extract = {f"{metric}.extract": "fever_label" for metric in ("kilt_downstream", "kilt_retrieval")}
    values = kilt_run(tmp_path, "kilt_fever", name="label", system="closed_book", model=model, metric_args=extract)
    assert values["accuracy"] == 0.5  # "Refutes" is not KILT's "REFUTES": accuracy compares the answer as written


RAW = json.loads((TEST_DATA / "parity" / "official_denominators.json").read_text(encoding="utf-8"))["kilt_raw_outputs"]


@pytest.mark.parametrize("name", sorted(RAW))
def test_the_output_is_scored_whole_as_eval_downstream_scores_it(tmp_path, name):
    """ "SUPPORTS." is not the answer SUPPORTS, a second line is part of the answer: the values of running
    eval_downstream.py on the same outputs."""
    task = f"kilt_{name}"
    lines = [
        {"id": record["id"], "output": answer, "docs": []}
        for record, answer in zip(records(task), RAW[name]["answers"])
    ]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    values = kilt_run(tmp_path, task, system="recorded", system_args={"path": str(tmp_path / "predictions.jsonl")})
    assert {key: values[key] for key in RAW[name]["downstream"]} == pytest.approx(RAW[name]["downstream"], abs=1e-12)


def test_an_index_of_passages_with_their_wikipedia_id_serves_kilts_page_level_retrieval(tmp_path):
    """A JSONL corpus line's `wikipedia_id` travels through `ragbench index build` to the passages a run
    shows, where kilt_retrieval reads it."""
    from ragbench.testing import build_index

    index = tmp_path / "index"
    build_index(
        SAMPLES / "kilt_passages.jsonl", index, "bm25", chunk_size=4, progress=False, registry=installed_registry()
    )
    rules = [
        {"pattern": "fishing town of olm", "response": "Ansgar Pell"},
        {"pattern": "capital of varn", "response": "Evermouth"},
    ]
    (tmp_path / "rules.json").write_text(json.dumps(rules), encoding="utf-8")
    values = kilt_run(
        tmp_path,
        "kilt_nq",
        system="vanilla",
        model=f"scripted:{tmp_path / 'rules.json'}",
        system_args={"top_n": 1},
        retriever="bm25",
        retriever_args={"index": str(index)},
    )
    shown = [sample["prediction"]["docs"][0] for sample in samples(tmp_path / "run", "kilt_nq")]
    assert [doc["metadata"]["wikipedia_id"] for doc in shown] == ["90001", "90002"]
    assert {key: values[key] for key in ("em", "rprec", "kilt_em")} == pytest.approx(
        {"em": 1, "rprec": 1, "kilt_em": 1}
    )


def test_an_output_whose_answer_is_null_is_one_without_an_answer_as_kilt_reads_it(tmp_path):
    """eval_downstream.py's `get_gold_answers` skips an output whose answer is null (and eval_retrieval.py
    still reads its provenance): the record is scored on its other answers, not a bad record."""
    record = {
        "id": "q1",
        "input": "who founded the fishing town of olm",
        "meta": {},
        "output": [
            {"answer": None, "provenance": [{"wikipedia_id": "90001", "title": "Olm"}]},
            {"answer": "Ansgar Pell"},
        ],
    }
    data = tmp_path / "nq-dev-kilt.jsonl"
    data.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (tmp_path / "rules.json").write_text(json.dumps([{"response": "Ansgar Pell"}]), encoding="utf-8")
    results = run(
        tmp_path,
        tasks=["kilt_nq"],
        data={"kilt_nq": str(data)},
        system="closed_book",
        model=f"scripted:{tmp_path / 'rules.json'}",
    )
    assert results["counts"]["kilt_nq"]["bad_records"] == 0 and results["counts"]["kilt_nq"]["scored"] == 1
    assert samples(tmp_path / "run", "kilt_nq")[0]["gold"]["answers"] == ["Ansgar Pell"]
    assert results["results"]["kilt_nq"]["em"] == 1


@pytest.mark.parametrize("task", SHIPPED)
def test_a_record_whose_outputs_carry_only_provenance_is_scored_for_retrieval_not_answers(tmp_path, task):
    """eval_retrieval.py scores such a record; eval_downstream.py's max over its no answers raises: its
    answer metrics are not scorable (counted apart), it is not a bad record."""
    record = {
        "id": "q1",
        "input": "who founded the fishing town of olm",
        "meta": {},
        "output": [{"provenance": [{"wikipedia_id": "90001", "title": "Olm"}]}],
    }
    data = tmp_path / DEV_FILES[task]
    data.write_text(json.dumps(record) + "\n", encoding="utf-8")
    results = run(tmp_path, tasks=[task], data={task: str(data)}, system="closed_book", model="scripted:echo")
    assert results["counts"][task]["bad_records"] == 0 and results["counts"][task]["scored"] == 1
    scores = samples(tmp_path / "run", task)[0]["scores"]
    assert scores["rprec"] == 0.0 and scores["recall_at_5"] == 0.0
    assert scores["em"] is None and scores["kilt_em"] is None

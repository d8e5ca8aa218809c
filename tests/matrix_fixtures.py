"""Small data in each built-in task's upstream format, and one scripted model for every system, so that
the system x task matrix can run offline (tests/test_matrix.py, benchmarks/matrix.py).

A task added to ragbench gets one line in TASK_DATA: a builder writing its data under a folder and
returning (--data path, --task-arg options). Everything here is written for ragbench, not copied.
"""
from __future__ import annotations

import json
import tarfile
from io import BytesIO
from pathlib import Path
from typing import Any, Callable

from conftest import TEST_DATA, write_jsonl
from crag_helpers import crag_record, tokenizer_dir
from crag_tiny_kg import write_tiny_kg

import ragbench.tasks.demo

ALCE = TEST_DATA / "alce"

# First match wins on the request's last message: NLI premises, CRAG judges, LLatrieval's selection and
# verification, then an answer citing the first document.
RULES = [
    {"pattern": r"^premise: ", "response": "1"},
    {"pattern": r"Ground truth: ", "response": '{"accuracy": true}'},
    {"pattern": r"^Query: [^\n]*\nQuery Time: [^\n]*\n?$", "response": '{"domain": "other", "main_entity": "florida"}'},
    {"pattern": r"\nk: \d+", "response": "Selected Documents: 1, 2"},
    {"pattern": r"^Question:.*\n\nDocuments:", "response": "[YES]"},
    {"response": "answer 1 [1]. true B Paris"},
]


def popqa(folder: Path) -> tuple[str, dict[str, Any]]:
    rows = [{"id": i, "question": f"Who is person {i}?", "answers": [f"person {i}"], "prop": "occupation",
             "s_wiki_title": f"P{i}", "pop": 10, "ctxs": [{"id": f"{i}0", "title": f"P{i}", "text": f"Person {i} is"
                                                           " a painter.", "score": "1.5"}]} for i in range(2)]
    return str(write_jsonl(folder / "popqa.jsonl", rows)), {}


def pubhealth(folder: Path) -> tuple[str, dict[str, Any]]:
    return str(TEST_DATA / "selfrag" / "health_claims_processed.sample.jsonl"), {}


def arc(folder: Path) -> tuple[str, dict[str, Any]]:
    rows = [{"id": f"arc{i}", "question": f"Which gas do plants take in ({i})?", "answerKey": "B",
             "choices": {"text": ["oxygen", "carbon dioxide", "helium", "neon"], "label": ["A", "B", "C", "D"]},
             "ctxs": [{"id": "c1", "title": "Photosynthesis", "text": "Plants take in carbon dioxide.", "score": "2"}]}
             for i in range(2)]
    return str(write_jsonl(folder / "arc.jsonl", rows)), {}


def alce(name: str) -> Callable[[Path], tuple[str, dict[str, Any]]]:
    return lambda folder: (str(ALCE / name), {})


def crag(task: str) -> Callable[[Path], tuple[str, dict[str, Any]]]:
    def build(folder: Path) -> tuple[str, dict[str, Any]]:
        records = [crag_record(i, split=1) for i in range(2)]
        args = {"tokenizer": tokenizer_dir(), "embedder": "crag_helpers:KeywordEmbedder", "page_executor": "thread",
                "split": "all"}
        if task != "crag_t1":
            args["kg_dir"] = str(write_tiny_kg(folder / "cragkg"))
        if task != "crag_t3":
            return str(write_jsonl(folder / f"{task}.jsonl", records)), args
        buffer = BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:bz2") as archive:
            blob = "".join(json.dumps(r) + "\n" for r in records).encode()
            info = tarfile.TarInfo("crag_task_3_dev_v5/part_0.jsonl")
            info.size = len(blob)
            archive.addfile(info, BytesIO(blob))
        path = folder / "crag_task_3_dev_v5.tar.bz2.part0"
        path.write_bytes(buffer.getvalue())
        return str(path), args
    return build


def squad(folder: Path) -> tuple[str, dict[str, Any]]:
    """dev-v1.1.json layout; the paragraph shown as the document (passages=context)."""
    qas = [{"id": f"sq{i}", "question": f"Where does person {i} live?",
            "answers": [{"answer_start": 0, "text": "Paris"}, {"answer_start": 0, "text": "Paris"}]} for i in range(2)]
    data = {"version": "1.1", "data": [{"title": "Person_lives", "paragraphs": [
        {"context": "Person 0 and person 1 live in Paris.", "qas": qas}]}]}
    path = folder / "dev-v1.1.json"
    path.write_text(json.dumps(data))
    return str(path), {"passages": "context"}


TASK_DATA: dict[str, Callable[[Path], tuple[str, dict[str, Any]]]] = {
    "popqa": popqa,
    "pubhealth": pubhealth,
    "arc_challenge": arc,
    "squad": squad,
    "asqa": alce("asqa_eval_gtr_top100.json"),
    "demo": lambda folder: (str(Path(ragbench.tasks.demo.__file__).parent / "data" / "demo_qa.jsonl"), {}),
    "alce_asqa": alce("asqa_eval_gtr_top100.json"),
    "alce_qampari": alce("qampari_eval_gtr_top100.json"),
    "alce_eli5": alce("eli5_eval_bm25_top100.json"),
    "crag_t1": crag("crag_t1"),
    "crag_t2": crag("crag_t2"),
    "crag_t3": crag("crag_t3"),
    "omnieval_auto": lambda folder: (str(TEST_DATA / "omnieval" / "gen_datas_test_final"), {}),
    "omnieval_human": lambda folder: (str(TEST_DATA / "omnieval" / "gen_datas_test_final"), {}),
}


def cell_config(task: str, system: str, folder: Path, limit: int = 2) -> dict[str, Any]:
    """RunConfig fields of one matrix cell: the task's small data, a scripted model, judge and NLI."""
    folder.mkdir(parents=True, exist_ok=True)
    rules = folder / "rules.json"
    rules.write_text(json.dumps(RULES))
    data, task_args = TASK_DATA[task](folder)
    model = f"scripted:{rules}"
    config: dict[str, Any] = {"tasks": [task], "system": system, "model": model, "judges": [model], "nli": model,
                              "data": {task: data}, "task_args": task_args, "limit": limit, "progress": False,
                              "bootstrap_iters": 50, "output": str(folder / "run")}
    if system == "recorded":  # scoring outputs made elsewhere: a predictions file for the task's examples
        from ragbench.planning import plan
        from ragbench.registry import get_registry
        from ragbench.run_config import RunConfig
        from ragbench.types import Example

        probe = plan(RunConfig(tasks=[task], system="closed_book", data={task: data}, task_args=task_args,
                               judges=[model], nli=model), get_registry())[0].task
        ids = [e.id for e in probe.examples() if isinstance(e, Example)][:limit]
        predictions = write_jsonl(folder / "predictions.jsonl", [{"id": i, "output": "answer 1"} for i in ids])
        config["system_args"] = {"path": str(predictions)}
    return config

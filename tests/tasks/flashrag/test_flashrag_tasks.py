"""The rest of FlashRAG's collection as YAML tasks (tasks/flashrag): each downloads its file from
FlashRAG_datasets, reads its sample - ragbench's own records in FlashRAG's JSONL (tests/data/flashrag),
named as the file the task downloads - and scores known answers to the hand-worked numbers below."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT, TEST_DATA
from ragbench.testing import installed_registry
from support.helpers import run

SAMPLES = TEST_DATA / "flashrag"
TASK_FILES = {path.stem: path for path in sorted((ROOT / "tasks" / "flashrag").glob("*.yaml"))}
OPEN_QA_FLASHRAG = [
    "nq_open_flashrag",
    "triviaqa_flashrag",
    "webquestions_flashrag",
    "hotpotqa_distractor_flashrag",
    "2wikimultihopqa_flashrag",
    "musique_flashrag",
]
MULTIPLE_CHOICE = ["siqa", "commonsenseqa", "piqa", "mmlu", "truthfulqa", "hellaswag", "arc", "openbookqa", "quartz"]
ROUGE_SETS = ["msmarco_qa", "narrativeqa", "wikiqa", "asqa", "eli5", "wikipassageqa", "wikiasp", "wow", "domainrag"]
URL = "https://huggingface.co/datasets/RUC-NLPIR/FlashRAG_datasets/resolve/main/"


def score(tmp_path: Path, task: str, answers: dict[str, str]) -> dict:
    """The task run closed book on its sample, a scripted model answering each question (by a pattern of it);
    the task's values."""
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"pattern": p, "response": r} for p, r in answers.items()]), encoding="utf-8")
    data = SAMPLES / installed_registry().load("tasks", task).spec.data.file
    results = run(tmp_path, tasks=[task], data={task: str(data)}, system="closed_book", model=f"scripted:{rules}")
    counts = results["counts"][task]
    assert counts["records"] == counts["scored"] == 2 and counts["failed"] == counts["bad_records"] == 0
    return results["results"][task]


def test_group_flashrag_holds_every_flashrag_task_and_flashrag_qa_stays_as_it_was():
    groups = installed_registry().groups
    assert sorted(groups["flashrag"]) == sorted([*OPEN_QA_FLASHRAG, *TASK_FILES])
    assert len(groups["flashrag"]) == 37
    assert groups["flashrag_qa"] == OPEN_QA_FLASHRAG


@pytest.mark.parametrize("task", sorted(TASK_FILES))
def test_each_set_downloads_its_flashrag_file_and_scores_its_gold_as_right(task, tmp_path):
    spec = installed_registry().load("tasks", task).spec
    folder, split = spec.data.url.removeprefix(URL).split("/")
    assert (
        spec.data.url.startswith(URL)
        and spec.data.format == "flashrag"
        and split in ("train.jsonl", "dev.jsonl", "test.jsonl")
    )
    assert spec.data.file == f"flashrag_{folder}_{split}" and spec.prompt.style == "flashrag"
    records = [json.loads(line) for line in (SAMPLES / spec.data.file).read_text(encoding="utf-8").splitlines()]
    right = [
        record["choices"][record["golden_answers"][0]] if "choices" in record else record["golden_answers"][0]
        for record in records
    ]
    # both right: every answer metric 1 (ROUGE: the F of equal texts, 2PR/(P+R+1e-8))
    values = score(tmp_path, task, {records[0]["question"]: right[0], records[1]["question"]: right[1]})
    rouge = {"rouge_1", "rouge_2", "rouge_l"} if task.removesuffix("_flashrag") in ROUGE_SETS else set()
    assert set(values) == {"em", "hotpot_f1", "cover_em", "precision", "recall", *rouge}
    assert values == pytest.approx({key: 2 / (2 + 1e-8) if key in rouge else 1.0 for key in values})


@pytest.mark.parametrize("name", MULTIPLE_CHOICE)
def test_a_multiple_choice_answer_is_scored_as_the_right_choices_text(name, tmp_path):
    """Record 1's right choice is index 1, "Ansgar Pell"; record 2's index 2, "Evermouth". FlashRAG scores the
    text: "Ansgar Pell" is right (em 1), the letter or index of a choice is not (em 0, no token in common)."""
    values = score(tmp_path, f"{name}_flashrag", {"Olm": "Ansgar Pell", "Varn": "C"})
    assert values == pytest.approx({"em": 0.5, "hotpot_f1": 0.5, "cover_em": 0.5, "precision": 0.5, "recall": 0.5})


def test_boolq_and_strategyqa_score_yes_and_no_as_hotpotqa_does(tmp_path):
    """Golds "yes" then "no". "yes, he did": em 0, cover_em 1 ("yes" in "yes he did"), f1/precision/recall 0 (the
    yes/no rule); "No.": all 1."""
    values = score(tmp_path, "boolq_flashrag", {"ansgar pell": "yes, he did", "trask": "No."})
    assert values == pytest.approx({"em": 0.5, "hotpot_f1": 0.5, "cover_em": 1.0, "precision": 0.5, "recall": 0.5})


def test_curatedtrec_golds_are_regular_expressions(tmp_path):
    """Record 1's golds "Ansgar Pell", "(ansgar )?pell"; record 2's "Evermouth", "(the )?port city of
    Evermouth|Evermouth city". "Pell" (normalised "pell") fullmatches the second pattern, "Evermouth city" the
    second alternative: em 1 and 1, where the golds taken as text (normalised "ansgar pell", "port city of
    evermouthevermouth city") match neither; cover_em 1, 1. Token scores against the golds as text, best gold:
    "pell" vs "ansgar pell" F1 2/3 (precision 1, recall 1/2); "evermouth city" vs "evermouth" F1 2/3
    (precision 1/2, recall 1; against the pattern's 5 tokens "city" alone: precision 1/2, recall 1/5)."""
    values = score(tmp_path, "curatedtrec_flashrag", {"olm": "Pell", "varn": "Evermouth city"})
    assert values == pytest.approx(
        {"em": 1.0, "cover_em": 1.0, "hotpot_f1": 2 / 3, "precision": 3 / 4, "recall": 3 / 4}
    )

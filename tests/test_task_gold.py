"""Each task says how to read its gold (`Task.gold_references`): the built-in tasks read the records
their loaders make, the default reads `answers` or a `label`, and the metrics that know no benchmark
(llm_judge, hf:NAME) ask the task, so a plugin task's own gold shape reaches them."""
from __future__ import annotations

import json

import pytest
from conftest import TEST_DATA
from crag_helpers import crag_record

from ragbench.api import Example, Task
from ragbench.tasks.alce.tasks import AlceAsqa, AlceEli5, AlceQampari
from ragbench.tasks.crag.task import CragTask1, example_from_record
from ragbench.tasks.selfrag.tasks import PubHealth
from ragbench.testing import ScriptedLLM, run_eval


def first_gold(task: Task) -> dict:
    task.prepare()
    return next(e for e in task.examples() if isinstance(e, Example)).gold


def test_alce_tasks_read_their_long_answers_and_qampari_its_list_as_one_text():
    asqa = AlceAsqa(data_path=TEST_DATA / "alce" / "asqa_eval_gtr_top100.json")
    gold = first_gold(asqa)
    assert asqa.gold_references(gold) == gold["long_answers"] and len(gold["long_answers"]) == 2
    assert asqa.gold_references({"qa_pairs": [{"short_answers": ["a", "b"]}, {"short_answers": ["c"]}],
                                 "answer": "", "long_answers": []}) == ["a", "b", "c"]
    qampari = AlceQampari(data_path=TEST_DATA / "alce" / "qampari_eval_gtr_top100.json")
    gold = first_gold(qampari)
    assert qampari.gold_references(gold) == [gold["answer"]]
    assert qampari.gold_references({"answers": [["Marazan", "marazan"], ["On the Beach"]], "answer": ""}) \
        == ["Marazan, On the Beach"]
    eli5 = AlceEli5(data_path=TEST_DATA / "alce" / "eli5_eval_bm25_top100.json")
    gold = first_gold(eli5)
    assert eli5.gold_references(gold) == [gold["answer"]] and gold["claims"]


def test_crag_reads_its_answer_then_the_alternatives():
    gold = example_from_record(crag_record(0, alt_ans=["answer zero"]), 1, "crag.jsonl").gold
    assert CragTask1().gold_references(gold) == ["answer 0", "answer zero"]


def test_the_default_reads_answers_else_the_label():
    assert Task().gold_references({"answers": ["Paris", 1]}) == ["Paris", "1"]
    assert PubHealth().gold_references({"answers": [], "label": "SUPPORTS"}) == ["SUPPORTS"]
    assert Task().gold_references({"solution": "x"}) == []


class Riddles(Task):
    """A task whose gold is its own shape: {"solution": {"text": ...}}."""

    name = "riddles"
    metrics = ("match",)

    def examples(self):
        yield Example(id="r1", question="What has keys but opens no lock?", gold={"solution": {"text": "a piano"}})

    def build_prompt(self, example, docs=None, **options):
        return f"Riddle: {example.question}\nAnswer:"

    def gold_references(self, gold):
        return [gold["solution"]["text"]]


def test_the_llm_judge_is_shown_the_tasks_own_reading_of_its_gold():
    judge = ScriptedLLM({"Reference answer\\(s\\): a piano\n": "correct", "": "incorrect"})
    run = run_eval(Riddles, "closed_book", ScriptedLLM("a piano"), metrics=["llm_judge"], judges=[judge])
    assert run.scores["riddles"]["llm_judge"] == 1.0
    assert "Reference answer(s): a piano\n" in run.samples["riddles"][0].judge_trace[0].request["messages"][0]["content"]


def test_an_evaluate_metric_gets_the_tasks_references_and_records_no_per_example_error():
    pytest.importorskip("evaluate", reason="pip install 'ragbench[evaluate]'")
    name = f"hf:{TEST_DATA / 'evaluate' / 'word_overlap.py'}"
    run = run_eval(Riddles, "closed_book", ScriptedLLM("a piano"), metrics=[name])
    assert run.scores["riddles"][name] == 1.0 and run.complete
    assert run.samples["riddles"][0].score_errors == {}


def test_each_sample_carries_the_tasks_reading_of_its_gold():
    run = run_eval(Riddles, "closed_book", ScriptedLLM("a piano"))
    [sample] = run.samples["riddles"]
    assert sample.gold == {"solution": {"text": "a piano"}} and sample.gold_references == ["a piano"]


class BrokenReading(Riddles):
    name = "broken_reading"

    def gold_references(self, gold):
        return [gold["answer"]]


def test_a_reading_of_the_gold_that_raises_is_recorded_and_the_example_still_scored(tmp_path):
    run = run_eval(BrokenReading, "closed_book", ScriptedLLM("a piano"), output=tmp_path / "run")
    [line] = (tmp_path / "run" / "samples" / "broken_reading.jsonl").read_text().splitlines()
    assert json.loads(line)["gold_references_error"] == "KeyError: 'answer'"
    assert run.samples["broken_reading"][0].gold_references == [] and "match" in run.scores["broken_reading"]

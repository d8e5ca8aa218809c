"""OmniEval metrics against values produced by the upstream code (tests/data/parity/omnieval_upstream.json),
and the model-based judge end to end through a `replay:` evaluator file."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest

from conftest import TEST_DATA
from ragbench.api import Context, Document, Example, Prediction, Step
from ragbench.tasks.omnieval.judge import OmniEvalJudge, judge_prompt, metric_score, parse_value, qwen25_prompt
from ragbench.tasks.omnieval.metrics import OmniEvalRetrieval, OmniEvalRule, average_precision, mrr, nonnegative_mean
from ragbench.tasks.omnieval.task import OmniEvalAuto
from support.helpers import run, samples

PARITY = json.loads((TEST_DATA / "parity" / "omnieval_upstream.json").read_text(encoding="utf-8"))
TREE = TEST_DATA / "omnieval" / "gen_datas_test_final"


@pytest.mark.parametrize("case", PARITY["rules"], ids=lambda c: c["prediction"][:12] or "empty")
def test_rule_metrics_equal_upstream(case):
    example = Example(id="x", question="q", gold={"answers": case["answers"]})
    got = OmniEvalRule().score(example, Prediction("x", answer=case["prediction"]))
    for key in ("rouge_1", "rouge_2", "rouge_l", "f1", "em"):
        assert got[key] == pytest.approx(case[key], abs=1e-12), key


@pytest.mark.parametrize("case", PARITY["parsing"], ids=lambda c: f"{c['metric']}:{c['reply'][:16]}")
def test_evaluator_reply_parsing_equals_upstream(case):
    value = metric_score(case["metric"], parse_value(case["reply"], case["metric"]))
    assert (-1 if value is None else value) == case["value"]


@pytest.mark.parametrize("case", PARITY["retrieval"], ids=lambda c: ",".join(c["retrieved"]))
def test_map_mrr_equal_upstream(case):
    assert average_precision(case["retrieved"], case["relevant"]) == pytest.approx(case["map"])
    assert mrr(case["retrieved"], case["relevant"]) == pytest.approx(case["mrr"])
    example = Example(id="x", question="q", gold={"answers": ["a"], "relevant_node": case["relevant"]})
    docs = [Document(d, "t", "c") for d in case["retrieved"]]
    assert OmniEvalRetrieval().score(example, Prediction("x", docs=docs)) == pytest.approx(
        {"map": case["map"], "mrr": case["mrr"]}
    )


def test_retrieval_of_a_question_without_its_relevant_node_field_is_not_scorable():
    """upstream fails on such a record (KeyError / TypeError), so no 0 stands in for it; an empty list
    scores 0 (the parity cases above)."""
    example = Example(id="x", question="q", gold={"answers": ["a"], "relevant_node": None})
    assert OmniEvalRetrieval().score(example, Prediction("x", docs=[Document("n1", "t", "c")])) == {
        "map": None,
        "mrr": None,
    }


def test_a_search_that_found_nothing_scores_0_and_closed_book_is_not_scorable():
    """upstream's _MAP/_MRR score an empty retrieved list 0 and count it in the mean; only a system that
    never searched (closed book) is left out."""
    example = Example(id="x", question="q", gold={"answers": ["a"], "relevant_node": ["n1"]})
    found_nothing = Step(
        kind="retrieval",
        name="retrieve",
        request={"retriever": "bm25", "query": "q", "k": 5},
        response={"ids": [], "scores": []},
    )
    assert OmniEvalRetrieval().score(example, Prediction("x", trace=[found_nothing])) == {"map": 0.0, "mrr": 0.0}
    failed = Step(kind="retrieval", name="retrieve", request={"query": "q", "k": 5}, error="TimeoutError")
    assert OmniEvalRetrieval().score(example, Prediction("x", trace=[failed])) == {"map": None, "mrr": None}
    asked_for_none = Step(
        kind="retrieval",
        name="retrieve",
        request={"retriever": "none", "query": "q", "k": 5},
        response={"ids": [], "scores": []},
    )
    assert OmniEvalRetrieval().score(example, Prediction("x", trace=[asked_for_none])) == {"map": None, "mrr": None}
    assert OmniEvalRetrieval().score(example, Prediction("x")) == {"map": None, "mrr": None}


def test_judge_asks_utilization_and_hallucination_after_a_search_that_found_nothing():
    """upstream drops UTL and HAL only in closed book; a retrieval run whose search found nothing is asked."""

    class Judge:
        def __init__(self):
            self.steps = []

        async def generate(self, prompt, step, **sampling):
            self.steps.append(step.rsplit(":", 1)[-1])
            return SimpleNamespace(text='{"prediction": 1}')

    example = Example(id="x", question="q", gold={"answers": ["a"]})
    found_nothing = Step(
        kind="retrieval",
        name="retrieve",
        request={"retriever": "bm25", "query": "q", "k": 5},
        response={"ids": [], "scores": []},
    )
    for trace, expected in (([found_nothing], {"utilization", "hallucination"}), ([], set())):
        judge = Judge()
        asyncio.run(
            OmniEvalJudge().score(
                example, Prediction("x", answer="a", trace=trace), Context(llm=None, task=None, judges=[judge])
            )
        )
        assert {"utilization", "hallucination"} & set(judge.steps) == expected


def test_cell_and_pooled_aggregation_equal_upstream():
    agg = PARITY["aggregation"]
    for cell, values in agg["values"].items():
        assert nonnegative_mean(values) == agg["cells"][cell]
    pooled = [v for values in agg["values"].values() for v in values]
    assert nonnegative_mean(pooled) == pytest.approx(agg["overall"])
    judge = OmniEvalJudge()  # every negative value is not scored (metric_score), so the mean has none
    assert judge.aggregate("accuracy", [v for v in pooled if v >= 0]) == pytest.approx(agg["overall"])
    assert judge.aggregate("judge_failures", [1.0, 0.0, 2.0]) == 3.0


def test_prompt_is_the_qwen25_template_around_the_verbatim_prompt():
    example = Example(id="x", question="利率是多少？", gold={"answers": ["1.65%", "百分之1.65"]})
    prompt = judge_prompt("accuracy", example, Prediction("x", answer="1.65%"))
    assert prompt.startswith("<|im_start|>system\n## 背景\n你是一个专业的预测答案正确性评估员。")
    assert "\\{\n" in prompt  # the system prompt's literal backslashes reach the model, as upstream
    assert prompt.endswith(
        "<|im_end|>\n<|im_start|>user\n\n## 输入信息\n- 问题：利率是多少？\n- 正确答案： 1.65%\n百分之1.65\n"
        "- 预测答案：1.65%\n\n## 正确性评估结果\n<|im_end|>\n<|im_start|>assistant\n"
    )
    assert (
        qwen25_prompt("S", "U")
        == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"
    )


def test_judge_run_with_replay_file_scores_and_counts_a_failed_call(tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"response": "五年"}]))
    # closed book: UTL and HAL are not asked (upstream drops them); 2 examples x ACC, COM, NAC
    data = {"omnieval_auto": str(TREE)}
    items = list(OmniEvalAuto(TREE, tasks="抽取类问答", topics="0").examples())
    replies = {
        ("accuracy", 0): '{"prediction": 2}',
        ("completeness", 0): '{"prediction": -1}',
        ("numerical_accuracy", 0): '```json\n{"numerical_accuracy": 1}\n```',
        ("accuracy", 1): '{"prediction": 0',
        ("completeness", 1): "不适用",
    }
    lines = [
        {"prompt": judge_prompt(m, items[i], Prediction(items[i].id, answer="五年")), "response": r}
        for (m, i), r in replies.items()
    ]
    lines.append(
        {
            "prompt": judge_prompt("numerical_accuracy", items[1], Prediction(items[1].id, answer="五年")),
            "error": "HTTP 500",
        }
    )
    replay = tmp_path / "judge.jsonl"
    replay.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    results = run(
        tmp_path,
        tasks=["omnieval_auto"],
        system="closed_book",
        model=f"scripted:{rules}",
        data=data,
        task_args={"tasks": "抽取类问答", "topics": "0"},
        metrics=["omnieval_judge"],
        judges=[f"replay:{replay}"],
    )
    rows = samples(tmp_path / "run", "omnieval_auto")
    assert rows[0]["scores"] | {} == {
        **rows[0]["scores"],
        "accuracy": 1.0,
        "completeness": None,
        "numerical_accuracy": 1.0,
        "utilization": None,
        "hallucination": None,
        "judge_failures": 0.0,
    }
    assert rows[1]["scores"]["accuracy"] == 0.0 and rows[1]["scores"]["numerical_accuracy"] is None
    assert rows[1]["scores"]["judge_failures"] == 1.0
    out = results["results"]["omnieval_auto"]
    assert out["accuracy"] == 0.5 and out["numerical_accuracy"] == 1.0 and out["judge_failures"] == 1.0


def test_a_negative_evaluator_value_is_not_scored_so_n_counts_only_what_the_mean_holds(tmp_path):
    # upstream's mean leaves out every negative value, not just -1: such an example is in neither the mean nor n
    assert metric_score("accuracy", -4) is None and metric_score("numerical_accuracy", -2) is None
    items = list(OmniEvalAuto(TREE, tasks="抽取类问答", topics="0").examples())
    replies = {("accuracy", 0): '{"prediction": -4}', ("accuracy", 1): '{"prediction": 2}'}
    lines = [
        {"prompt": judge_prompt(m, items[i], Prediction(items[i].id, answer="五年")), "response": r}
        for (m, i), r in replies.items()
    ]
    replay = tmp_path / "judge.jsonl"
    replay.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"response": "五年"}]))
    results = run(
        tmp_path,
        tasks=["omnieval_auto"],
        system="closed_book",
        model=f"scripted:{rules}",
        data={"omnieval_auto": str(TREE)},
        task_args={"tasks": "抽取类问答", "topics": "0"},
        metrics=["omnieval_judge"],
        metric_args={"omnieval_judge.metrics": "accuracy"},
        judges=[f"replay:{replay}"],
    )
    assert [row["scores"]["accuracy"] for row in samples(tmp_path / "run", "omnieval_auto")] == [None, 1.0]
    entry = results["details"]["omnieval_auto"]["accuracy"]
    assert (entry["value"], entry["n"], entry["n_none"]) == (1.0, 1, 1)

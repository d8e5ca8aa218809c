"""`ragbench score` over a folder of OmniEval's own inference files (`<一级> - <二级> - <task>.pred.jsonl`)."""

from __future__ import annotations

import json

from conftest import TEST_DATA
from ragbench.tasks.omnieval.task import OmniEvalAuto
from support.helpers import cli_here, run, samples

TREE = TEST_DATA / "omnieval" / "gen_datas_test_final"
PREDS = TEST_DATA / "omnieval" / "pred_bm25_TOP2-qwen2-72b"


def test_prediction_folder_maps_turns_and_skips_judge_excluded_files():
    records = [r for _, r in OmniEvalAuto(TREE).prediction_records(PREDS)]
    ids = [r["id"] for r in records]
    assert "银行业务 - 零售银行 - 多轮对话能力/0/2" in ids and "银行业务 - 零售银行 - 多轮对话能力/1/1" in ids
    assert not any(i.startswith("金融科技 - 移动支付") for i in ids)
    assert len(ids) == 9 and set(ids) == {e.id for e in OmniEvalAuto(TREE).examples()}


def test_score_folder_gives_rule_and_retrieval_metrics(tmp_path):
    results = run(
        tmp_path,
        tasks=["omnieval_auto"],
        system="recorded",
        system_args={"path": str(PREDS)},
        data={"omnieval_auto": str(TREE)},
    )
    assert results["counts"]["omnieval_auto"] | {} == {
        **results["counts"]["omnieval_auto"],
        "scored": 9,
        "missing": 0,
        "metric_failures": 0,
    }
    assert results["complete"]
    rows = {r["id"]: r for r in samples(tmp_path / "run", "omnieval_auto")}
    first = rows["银行业务 - 零售银行 - 抽取类问答/0"]["scores"]
    assert first["map"] == 0.5 and first["mrr"] == 0.5 and first["em"] == 0.5
    turn = rows["银行业务 - 零售银行 - 多轮对话能力/0/1"]["scores"]
    assert turn["em"] == 0.5 and turn["mrr"] == 1.0
    assert rows["投资 - 基金 - 对比类问答/0"]["scores"]["map"] == 1.0  # one of two relevant found, at rank 1


def test_score_cli_with_folder(tmp_path):
    done = cli_here(
        "score",
        "--task",
        "omnieval_auto",
        "--data",
        str(TREE),
        "--predictions",
        str(PREDS),
        "--output",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["counts"]["omnieval_auto"]["scored"] == 9


def test_report_has_cell_task_topic_tables_and_the_matrix_heat_map(tmp_path):
    run(
        tmp_path,
        tasks=["omnieval_auto"],
        system="recorded",
        system_args={"path": str(PREDS)},
        data={"omnieval_auto": str(TREE)},
    )
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    for field in ("task", "topic", "cell"):
        assert f"### omnieval_auto by {field}" in report
    assert "| 银行业务 - 零售银行 - 多轮对话能力 | 5 |" in report
    assert "![omnieval_auto rouge_l matrix](plots/omnieval_auto__matrix__rouge_l.png)" in report
    assert (tmp_path / "run" / "plots" / "omnieval_auto__matrix__rouge_l.png").stat().st_size > 1000
    assert "accuracy matrix" not in report  # no judge in this run: no heat map for it

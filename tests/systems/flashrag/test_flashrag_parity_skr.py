"""FlashRAG's SKR (`ConditionalPipeline` with the SKR-kNN judger) against `skr`: given the fixture's judgements
(FlashRAG's judger needs CUDA and a SimCSE model; the recording scripted them), the same calls and predictions
with a plain and with a chat model and on the openai engine. The real judger loads and judges with a tiny random
encoder; without a judger the run is refused before it starts."""

import json
from collections import Counter

import pytest

from ragbench.api import ConfigError
from ragbench.plugins.skr.judger import SkrJudger, knn_rule
from support.flashrag_parity import CORPUS, QUESTIONS, assert_parity, judgements_file, retrieval_file
from support.helpers import run, samples
from support.tiny_models import tiny_bert


@pytest.mark.parametrize("form", ["plain", "chat", "openai"])
def test_skr_is_flashrags_conditional_pipeline(tmp_path, form):
    assert_parity(tmp_path, "skr", form, "skr", system_args={"judgements": str(judgements_file("skr", form, tmp_path))})


def test_without_a_judger_the_run_is_refused_before_it_starts(tmp_path):
    with pytest.raises(ConfigError, match="skr needs its judger: --system-arg judger_model=FOLDER"):
        run(tmp_path, tasks=["nq_open_flashrag"], system="skr", model="scripted:echo", retriever="provided")
    assert not (tmp_path / "run" / "samples").exists()


def test_a_missing_judger_folder_or_a_bad_judgements_file_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="not a local model folder"):
        run(
            tmp_path,
            tasks=["nq_open_flashrag"],
            system="skr",
            model="scripted:echo",
            system_args={"judger_model": str(tmp_path / "nowhere"), "training_data": str(tmp_path / "t.json")},
        )
    bad = tmp_path / "judgements.json"
    bad.write_text(json.dumps({"nq_1": "yes"}))
    with pytest.raises(ConfigError, match='has label "yes", not one of true, false'):
        run(
            tmp_path,
            name="run2",
            tasks=["nq_open_flashrag"],
            system="skr",
            model="scripted:echo",
            system_args={"judgements": str(bad)},
        )


def test_the_knn_rule_is_the_papers():
    balanced = Counter({"ir_better": 5, "ir_worse": 5})
    assert knn_rule(["ir_better"] * 3 + ["ir_worse"] * 2, balanced, 5) is True
    assert knn_rule(["ir_better"] * 2 + ["ir_worse"] * 2 + ["same"], balanced, 5) is False
    # more ir_worse in training: retrieve unless the neighbours lean to ir_worse beyond the training delta
    worse = Counter({"ir_better": 2, "ir_worse": 8})  # delta -6, threshold int(-6 * 5 / 10) = -3
    assert knn_rule(["ir_worse"] * 3 + ["same"] * 2, worse, 5) is False
    assert knn_rule(["ir_worse"] * 2 + ["same"] * 3, worse, 5) is True
    better = Counter({"ir_better": 8, "ir_worse": 2})  # threshold 3
    assert knn_rule(["ir_better"] * 3 + ["same"] * 2, better, 5) is True
    assert knn_rule(["ir_better"] * 2 + ["same"] * 3, better, 5) is False


def test_the_real_judger_loads_a_simcse_style_encoder_and_judges_each_question(tmp_path):
    folder = tiny_bert(tmp_path / "encoder")
    training = [
        {"question": q, "judgement": j}
        for q, j in [
            ("the city of india", "ir_better"),
            ("the city of colombia", "ir_better"),
            ("rain in the city", "ir_better"),
            ("the food of india", "ir_worse"),
            ("loans in a month", "ir_worse"),
            ("a record month", "same"),
        ]
    ]
    path = tmp_path / "training.json"
    path.write_text(json.dumps(training))
    judger = SkrJudger(folder, str(path), topk=3)
    # the question itself is in the training set: its own judgement is among its neighbours, nearest first
    for item in training:
        judged = judger.judge(item["question"])
        assert isinstance(judged["label"], bool) and len(judged["neighbours"]) == 3
        assert judged["neighbours"][0] == item["judgement"]


def test_a_run_with_the_real_judger_routes_by_its_judgements(tmp_path):
    """Every training question was answered better with retrieval: every question retrieves."""
    folder = tiny_bert(tmp_path / "encoder")
    path = tmp_path / "training.json"
    path.write_text(json.dumps([{"question": q, "judgement": "ir_better"} for q in ("the city", "a month", "rain")]))
    run(
        tmp_path,
        tasks=["nq_open_flashrag"],
        system="skr",
        data={"nq_open_flashrag": str(QUESTIONS)},
        system_args={"judger_model": str(folder), "training_data": str(path), "judger_topk": 2},
        model="scripted:echo",
        retriever="replay",
        metrics=[],
        retriever_args={"file": str(retrieval_file("naive", tmp_path)), "corpus": str(CORPUS)},
    )
    made = samples(tmp_path / "run", "nq_open_flashrag")
    assert len(made) == 6 and all(s.get("error") is None for s in made)
    for sample in made:
        kinds = [step["kind"] for step in sample["trace"]]
        assert kinds == ["custom", "retrieval", "llm"], kinds
        assert sample["trace"][0]["response"] == {"label": True, "neighbours": ["ir_better", "ir_better"]}

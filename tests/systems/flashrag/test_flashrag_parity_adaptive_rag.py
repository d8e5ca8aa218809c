"""FlashRAG's Adaptive-RAG (`AdaptivePipeline`) against `adaptive_rag`, given the fixture's judgements
(FlashRAG's T5 classifier needs CUDA and a downloaded model; the recording scripted them): the A (zero-shot) and
B (naive RAG) questions make the same calls and predictions with a plain and with a chat model, and the C
questions go to the multi-hop system, which with `ircot` (plugins/ircot) makes IRCoT's calls. The real
classifier loads and labels with a tiny random T5; without a classifier the run is refused before it starts."""

import json

import pytest

from conftest import plugins_read_once
from ragbench.api import ConfigError
from ragbench.plugins.adaptive_rag.judger import LABELS, ComplexityClassifier
from support.flashrag_parity import assert_parity, expected_calls, fixture, judgements_file
from support.helpers import run, samples
from support.tiny_models import tiny_t5


def labels(form):
    ids = list(expected_calls("adaptive_rag", form))
    return dict(zip(ids, fixture("adaptive_rag")["forms"][form]["judgements"]))


@pytest.mark.parametrize("form", ["plain", "chat"])
def test_a_and_b_questions_are_flashrags_and_c_questions_go_to_the_multi_hop_system(tmp_path, form):
    routed = labels(form)
    assert set(routed.values()) == {"A", "B", "C"}
    assert_parity(
        tmp_path,
        "adaptive_rag",
        form,
        "adaptive_rag",
        system_args={"judgements": str(judgements_file("adaptive_rag", form, tmp_path)), "multi_hop": "closed_book"},
        examples={i for i, label in routed.items() if label != "C"},
    )
    for sample in samples(tmp_path / f"adaptive_rag_{form}", "nq_open_flashrag"):
        label = routed[sample["id"]]
        steps = [(step["kind"], step.get("group")) for step in sample["trace"]]
        route = [f"{label}: " + {"A": "no retrieval", "B": "single-step", "C": "multi-step"}[label]]
        made = {"A": ["llm"], "B": ["retrieval", "llm"], "C": ["llm"]}[label]  # C: closed_book's one call
        assert steps == [("custom", None)] + [(kind, route) for kind in made], sample["id"]
        assert sample["prediction"]["extras"]["adaptive_rag"] == {"label": label}


@pytest.mark.skipif(
    "ircot" not in plugins_read_once().names("systems"),
    reason="the ircot system (plugins/ircot) is not installed here",
)
@pytest.mark.parametrize("form", ["plain", "chat"])
def test_adaptive_rag_is_flashrags_adaptive_pipeline(tmp_path, form):
    assert_parity(
        tmp_path,
        "adaptive_rag",
        form,
        "adaptive_rag",
        system_args={"judgements": str(judgements_file("adaptive_rag", form, tmp_path))},
    )


def test_without_a_classifier_the_run_is_refused_before_it_starts(tmp_path):
    with pytest.raises(ConfigError, match="adaptive_rag needs its classifier: --system-arg judger_model=FOLDER"):
        run(
            tmp_path,
            tasks=["nq_open_flashrag"],
            system="adaptive_rag",
            model="scripted:echo",
            system_args={"multi_hop": "closed_book"},
        )
    assert not (tmp_path / "run" / "samples").exists()


def test_an_unknown_multi_hop_system_is_refused_before_it_starts(tmp_path):
    path = tmp_path / "judgements.json"
    path.write_text(json.dumps({"nq_1": "C"}))
    with pytest.raises(ConfigError, match="no_such_system"):
        run(
            tmp_path,
            tasks=["nq_open_flashrag"],
            system="adaptive_rag",
            model="scripted:echo",
            system_args={"judgements": str(path), "multi_hop": "no_such_system"},
        )


def test_the_real_classifier_loads_and_labels_each_question(tmp_path):
    classifier = ComplexityClassifier(tiny_t5(tmp_path / "t5", extra=LABELS))
    assert len(set(classifier.label_ids)) == 3  # each label its own token, as T5's vocabulary has them
    for question in ("the city of india", "rain in a month ", "answer the question"):
        judged = classifier.judge(question)
        assert judged["label"] in LABELS and len(judged["probabilities"]) == 3
        assert judged["label"] == LABELS[judged["probabilities"].index(max(judged["probabilities"]))]

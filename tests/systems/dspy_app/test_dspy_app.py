"""The `dspy` system: real DSPy modules (tests/support/dspy_apps.py: DSPy's tutorial RAG module - dspy.Retrieve over
`dummy_rm`, a ChainOfThought answered by `DummyLM` - and DSPy's own Predict) run as a user's application. The answer
and passages ragbench records are the prediction's, its spans those OpenInference's DSPy instrumentor exports to the
SDK, and each way it goes wrong one line with nothing lost. Library versions these were written against: dspy 3.4.1,
openinference-instrumentation-dspy 0.1.48."""

from __future__ import annotations

import sys

import pytest

from ragbench.api import ConfigError
from ragbench.plugins.dspy_app.system import DSPyApp
from support.framework_runs import (  # noqa: F401  (exported: a fixture)
    assert_changes_stay_in_its_copies,
    assert_recorded_spans_are_exported,
    assert_the_loop_holds_are_reported,
    exported,
    records,
    run_app,
    steps,
)
from support.rag_apps import QUESTIONS

# support.dspy_apps (and DSPy with it) is imported by the tests that use it, not at collection: importing DSPy
# costs seconds of CPU in every pytest-xdist worker, most of which never run these tests.
RAG = {"module": "support.dspy_apps:rag"}


def test_a_module_answers_with_its_context_as_the_documents_its_spans_as_exported(tmp_path, exported):
    from support import dspy_apps

    results = run_app(tmp_path, "dspy", RAG, max_inflight=4)
    assert results["complete"], results.get("failures")
    assert results["details"]["varn_qa"]["em"]["value"] == 1.0  # DummyLM answers each question rightly
    assert_recorded_spans_are_exported(tmp_path, exported)
    for record in records(tmp_path):
        prediction = dspy_apps.rag(question=record["question"])
        assert record["prediction"]["answer"] == prediction.answer
        assert [doc["text"] for doc in record["prediction"]["docs"]] == prediction.context
        assert all("id" not in doc for doc in record["prediction"]["docs"])  # DSPy's passages are texts
        (search,) = steps(record, "retrieval")
        assert search["name"] == "Retrieve.forward" and record["question"] in search["request"]["query"]
        assert [doc["text"] for doc in search["docs"]] == prediction.context
        (model,) = steps(record, "llm")
        assert model["role"] == "app:dummy" and record["question"] in model["request"]["messages"][-1]["content"]
    assert results["model_cost"]["varn_qa"]["calls"] == 4


def test_a_class_is_made_and_a_module_with_aforward_is_called_through_acall(tmp_path):
    from support import dspy_apps

    made = DSPyApp("support.dspy_apps:RAG")
    assert made.sync and isinstance(made._module, dspy_apps.RAG)  # no aforward: called in a thread
    results = run_app(tmp_path, "dspy", {"module": "support.dspy_apps:predict"})
    assert results["complete"], results.get("failures")
    assert not DSPyApp("support.dspy_apps:predict").sync
    answers = {qid: answer for qid, _, answer in QUESTIONS}
    for record in records(tmp_path):
        assert record["prediction"]["answer"] == answers[record["id"]] and "docs" not in record["prediction"]
        assert [step["name"] for step in record["trace"][1:2]] == ["Predict.aforward"]


def test_a_module_that_raises_fails_its_example_keeping_its_trace_to_the_error(tmp_path):
    results = run_app(tmp_path, "dspy", {"module": "support.dspy_apps:Failing"})
    assert results["counts"]["varn_qa"]["failed"] == 4
    for record in records(tmp_path):
        assert record["error"] == "RuntimeError: the LM is down"
        (search,) = steps(record, "retrieval")
        assert len(search["docs"]) == 2


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (
            {"module": "support.dspy_apps:NumberAnswer"},
            "AppReplyError: system dspy: module support.dspy_apps:NumberAnswer returned int: 42 as its answer "
            "(answer), expected a string",
        ),
        (
            {**RAG, "passages": "documents"},
            "AppReplyError: system dspy: module support.dspy_apps:rag: passages=documents finds nothing in what it "
            "returned: no 'documents' in Prediction: Prediction(",
        ),
    ],
)
def test_a_prediction_of_another_shape_is_one_line(tmp_path, options, line):
    results = run_app(tmp_path, "dspy", options)
    assert results["counts"]["varn_qa"]["failed"] == 4
    for record in records(tmp_path):
        assert record["error"].startswith(line) and "\n" not in record["error"]


@pytest.mark.parametrize(
    ("module", "line"),
    [
        (
            "support.dspy_apps:not_a_module",
            "system dspy: module=support.dspy_apps:not_a_module() returned a dict, not a DSPy Module",
        ),
        ("support.haystack_apps:pipeline", "system dspy: module=support.haystack_apps:pipeline is a Pipeline, not a"),
    ],
)
def test_an_object_that_is_no_module_is_refused_before_the_run_in_one_line(tmp_path, module, line):
    with pytest.raises(ConfigError) as refused:
        run_app(tmp_path, "dspy", {"module": module})
    assert str(refused.value).startswith(line) and "\n" not in str(refused.value)
    assert not (tmp_path / "run").exists()


def test_a_missing_instrumentor_is_one_line_naming_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "openinference.instrumentation.dspy", None)
    with pytest.raises(ConfigError) as refused:
        run_app(tmp_path, "dspy", RAG)
    assert str(refused.value) == (
        "system dspy needs dspy and openinference-instrumentation-dspy, which is not installed "
        "(openinference.instrumentation.dspy cannot be imported): pip install 'ragbench[dspy]'"
    )


def test_a_module_whose_aforward_blocks_the_event_loop_answers_and_is_reported(tmp_path):
    results = run_app(tmp_path, "dspy", {"module": "support.dspy_apps:BlocksLoop"})
    assert_the_loop_holds_are_reported(results)


async def test_a_module_that_changes_what_it_is_given_changes_only_its_copy():
    inputs = {"question": "question", "history": "history", "meta": "meta", "extras": "extras"}
    await assert_changes_stay_in_its_copies(DSPyApp("support.dspy_apps:Mutates", inputs=inputs))

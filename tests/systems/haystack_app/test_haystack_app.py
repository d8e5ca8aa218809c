"""The `haystack` system: real Haystack pipelines (tests/support/haystack_apps.py: InMemoryDocumentStore +
InMemoryBM25Retriever + PromptBuilder + a generator of the tests' own + AnswerBuilder) run as a user's application.
The question goes to the inputs declared (or found) for it, the documents ragbench records are those the pipeline's
own outputs hold, its spans those OpenInference's Haystack instrumentor exports to the SDK (the prompt builder's
rendering no model call), and each way it goes wrong one line with nothing lost. Library versions these were written
against: haystack-ai 3.4.1, openinference-instrumentation-haystack 0.1.46."""

from __future__ import annotations

import sys

import pytest

from ragbench.api import ConfigError
from ragbench.plugins.haystack_app.system import HaystackApp
from support.framework_runs import (  # noqa: F401  (exported: a fixture)
    assert_changes_stay_in_its_copies,
    assert_recorded_spans_are_exported,
    assert_the_loop_holds_are_reported,
    doc_fields,
    exported,
    records,
    run_app,
    steps,
)

# support.haystack_apps (and Haystack with it) is imported by the tests that use it, not at collection: importing Haystack
# costs seconds of CPU in every pytest-xdist worker, most of which never run these tests.
PIPELINE = {"pipeline": "support.haystack_apps:pipeline"}


def hs_fields(documents) -> list[tuple]:
    return [(doc.id, doc.meta["title"], doc.content) for doc in documents]


def test_the_default_inputs_and_outputs_of_a_rag_pipeline():
    system = HaystackApp("support.haystack_apps:pipeline")
    assert system.inputs == {
        "retriever": {"query": "question"},
        "prompt_builder": {"question": "question"},
        "answer_builder": {"query": "question"},
    }
    assert (system.answer, system.passages) == ("answer_builder.answers.0", "answer_builder.answers.0.documents")
    bare = HaystackApp("support.haystack_apps:without_answer_builder")
    assert (bare.answer, bare.passages) == ("llm.replies.0", "retriever.documents")


@pytest.mark.parametrize("sync", [True, False])  # Pipeline.run in a thread, Pipeline.run_async on the loop
def test_a_pipeline_answers_with_its_documents_and_usage_its_spans_as_exported(tmp_path, exported, sync):
    from support import haystack_apps

    results = run_app(tmp_path, "haystack", {**PIPELINE, "sync": sync}, max_inflight=4)
    assert results["complete"], results.get("failures")
    assert results["details"]["varn_qa"]["em"]["value"] == 0.25  # the top passage's first word: "Varn" for q4
    assert_recorded_spans_are_exported(tmp_path, exported)
    prompt_tokens = 0
    for record in records(tmp_path):
        question = record["question"]
        outputs = haystack_apps.pipeline.run({"query": question, "question": question}, {"retriever"})
        (answer,) = outputs["answer_builder"]["answers"]
        assert record["prediction"]["answer"] == answer.data
        assert doc_fields(record["prediction"]["docs"]) == hs_fields(outputs["retriever"]["documents"])
        assert [doc["score"] for doc in record["prediction"]["docs"]] == [d.score for d in answer.documents]
        (search,) = steps(record, "retrieval")
        assert search["response"]["ids"] == [doc["id"] for doc in record["prediction"]["docs"]]
        (model,) = steps(record, "llm")  # the generator: the prompt builder's span is no model call
        assert model["name"] == "FirstWordGenerator.run" and model["role"] == "app:first-word-1"
        assert question in model["request"]["messages"][0]["content"]
        prompt_tokens += model["prompt_tokens"]
        assert "PromptBuilder.run" in [step["name"] for step in steps(record, "custom")]
    cost = results["model_cost"]["varn_qa"]
    assert (cost["calls"], cost["prompt_tokens"], cost["completion_tokens"]) == (4, prompt_tokens, 4)


def test_declared_inputs_and_output_paths(tmp_path):
    from support import haystack_apps

    options = {
        "pipeline": "support.haystack_apps:without_answer_builder",
        "inputs": {"retriever": {"query": "question"}, "prompt_builder": {"question": "question"}},
        "answer": "llm.replies.0",
        "passages": "retriever.documents",
    }
    results = run_app(tmp_path, "haystack", options)
    assert results["complete"], results.get("failures")
    for record in records(tmp_path):
        outputs = haystack_apps.without_answer_builder.run(
            {"retriever": {"query": record["question"]}, "prompt_builder": {"question": record["question"]}},
            {"retriever"},
        )
        assert record["prediction"]["answer"] == outputs["llm"]["replies"][0]
        assert doc_fields(record["prediction"]["docs"]) == hs_fields(outputs["retriever"]["documents"])


def test_a_pipeline_that_raises_fails_its_example_keeping_its_trace_to_the_error(tmp_path):
    results = run_app(tmp_path, "haystack", {"pipeline": "support.haystack_apps:broken"})
    assert results["counts"]["varn_qa"]["failed"] == 4
    for record in records(tmp_path):
        assert record["error"] == "ComponentFailed: component llm (Broken) failed: RuntimeError: the generator is down"
        assert "PipelineRuntimeError" in record["traceback"]  # Haystack's own error, chained
        (search,) = steps(record, "retrieval")
        assert search["request"]["query"] == record["question"] and search["docs"]
        assert any("the generator is down" in (step.get("error") or "") for step in record["trace"])


def test_an_output_path_that_finds_nothing_is_one_line(tmp_path):
    results = run_app(tmp_path, "haystack", {**PIPELINE, "answer": "llm.answers.0"})
    assert results["counts"]["varn_qa"]["failed"] == 4
    for record in records(tmp_path):
        assert record["error"].startswith(
            "AppReplyError: system haystack: pipeline support.haystack_apps:pipeline: answer=llm.answers.0 finds "
            "nothing in what it returned: no 'answers' in dict: {'meta': [{'model': 'first-word-1'"
        )


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (
            {"inputs": {"retriever": {"text": "question"}}},
            "system haystack: inputs: retriever.text is not an input the pipeline takes (its inputs no component "
            "feeds: retriever: query, filters, top_k, scale_score; prompt_builder: question, template, "
            "template_variables; answer_builder: query, pattern, reference_pattern",
        ),
        (
            {"inputs": {"retriever": {"query": "question"}}},
            "system haystack: the pipeline needs prompt_builder.question, answer_builder.query, which no field of the "
            "request is given to: declare them in inputs",
        ),
        (
            {"inputs": {"retriever": {"query": "questions"}}},
            "system haystack: inputs.retriever: query='questions' names no field of the request",
        ),
        ({"answer": "writer.replies.0"}, "system haystack: answer=writer.replies.0: the pipeline has no component"),
        (
            {"pipeline": "support.dspy_apps:rag"},
            "system haystack: pipeline=support.dspy_apps:rag is a RAG, not a Haystack Pipeline",
        ),
    ],
)
def test_what_it_cannot_run_is_refused_before_the_run_in_one_line(tmp_path, options, line):
    with pytest.raises(ConfigError) as refused:
        run_app(tmp_path, "haystack", {**PIPELINE, **options})
    assert str(refused.value).startswith(line) and "\n" not in str(refused.value)
    assert not (tmp_path / "run").exists()


def test_a_missing_instrumentor_is_one_line_naming_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "openinference.instrumentation.haystack", None)
    with pytest.raises(ConfigError) as refused:
        run_app(tmp_path, "haystack", PIPELINE)
    assert str(refused.value) == (
        "system haystack needs haystack-ai and openinference-instrumentation-haystack, which is not installed "
        "(openinference.instrumentation.haystack cannot be imported): pip install 'ragbench[haystack]'"
    )


def test_a_pipeline_whose_async_component_blocks_the_event_loop_answers_and_is_reported(tmp_path):
    results = run_app(tmp_path, "haystack", {"pipeline": "support.haystack_apps:blocks_loop", "sync": False})
    assert_the_loop_holds_are_reported(results)


async def test_a_component_that_changes_what_it_is_given_changes_only_its_copy():
    inputs = {"llm": {"question": "question", "history": "history", "meta": "meta", "extras": "extras"}}
    await assert_changes_stay_in_its_copies(HaystackApp("support.haystack_apps:mutates", inputs=inputs))

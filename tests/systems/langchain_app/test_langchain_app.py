"""The `langchain` system: real LangChain runnables (tests/support/langchain_apps.py, built offline with
langchain-core's fake chat model and embeddings over an in-memory vector store; a LangGraph graph) run as a user's
application. The documents ragbench records are those the Runnable returns (or its retrievers' callbacks hold), its
spans those OpenInference's LangChain instrumentor exports to the SDK, and each way it goes wrong one line with
nothing lost. Library versions these were written against: langchain-core 1.8.3, langgraph 1.2.24,
openinference-instrumentation-langchain 0.1.80."""

from __future__ import annotations

import sys

import pytest

from ragbench.api import ConfigError, Example
from ragbench.plugins.langchain_app.system import LangChainApp
from support.framework_runs import (  # noqa: F401  (exported: a fixture)
    assert_changes_stay_in_its_copies,
    assert_recorded_spans_are_exported,
    assert_the_loop_holds_are_reported,
    doc_fields,
    exported,
    records,
    run_app,
    run_one,
    steps,
)

# support.langchain_apps (and LangChain with it) is imported by the tests that use it, not at collection: importing LangChain
# costs seconds of CPU in every pytest-xdist worker, most of which never run these tests.
CHAIN = {"runnable": "support.langchain_apps:chain", "inputs": "question"}


def lc_fields(documents) -> list[tuple]:
    """The id, title and text of LangChain documents, as ragbench records them."""
    return [(doc.id, doc.metadata["title"], doc.page_content) for doc in documents]


def test_a_chain_answers_with_the_documents_it_returns_its_spans_the_trace(tmp_path):
    from support import langchain_apps

    results = run_app(tmp_path, "langchain", CHAIN)
    assert results["complete"], results.get("failures")
    assert results["details"]["varn_qa"]["em"]["value"] == 0.25  # the fake model says "Olm"; q1's answer
    for record in records(tmp_path):
        returned = langchain_apps.chain.invoke(record["question"])
        assert doc_fields(record["prediction"]["docs"]) == lc_fields(returned["context"])
        assert all(doc["metadata"] == {"source": "varn.txt"} for doc in record["prediction"]["docs"])
        (search,) = steps(record, "retrieval")
        assert search["request"]["query"] == record["question"]
        assert [doc["text"] for doc in search["docs"]] == [doc.page_content for doc in returned["context"]]
        (model,) = steps(record, "llm")
        assert model["response"]["texts"] == ["Olm"] and model["request"]["messages"][-1] == {
            "role": "user",
            "content": record["question"],
        }
        call = record["trace"][0]
        assert call["name"] == "application" and call["response"] == {"answer": "Olm", "passages": 2}
    assert results["model_cost"]["varn_qa"]["calls"] == 4


def test_a_chain_that_returns_only_its_answer_has_its_retrievers_documents(tmp_path):
    from support import langchain_apps

    results = run_app(tmp_path, "langchain", {"runnable": "support.langchain_apps:answer_only", "inputs": "question"})
    assert results["complete"], results.get("failures")
    for record in records(tmp_path):
        handler = langchain_apps.Documents()
        assert langchain_apps.answer_only.invoke(record["question"], {"callbacks": [handler]}) == "Olm"
        assert handler.documents and doc_fields(record["prediction"]["docs"]) == lc_fields(handler.documents)


def test_a_langgraph_graph_made_by_a_function_is_given_the_question_in_its_state(tmp_path):
    from support import langchain_apps

    results = run_app(tmp_path, "langchain", {"runnable": "support.langchain_apps:make_graph"})
    assert results["complete"], results.get("failures")
    graph = langchain_apps.make_graph()
    for record in records(tmp_path):
        state = graph.invoke({"question": record["question"]})
        assert record["prediction"]["answer"] == state["answer"] == "Olm"
        assert doc_fields(record["prediction"]["docs"]) == lc_fields(state["context"])
        names = [step["name"] for step in record["trace"]]
        assert {"retrieve", "generate"} <= set(names)  # the graph's nodes, as spans


def test_concurrent_examples_record_the_spans_the_sdk_exports_never_mixed(tmp_path, exported):
    results = run_app(tmp_path, "langchain", CHAIN, max_inflight=4)
    assert results["complete"], results.get("failures")
    assert_recorded_spans_are_exported(tmp_path, exported)
    for record in records(tmp_path):
        (search,) = steps(record, "retrieval")
        (model,) = steps(record, "llm")
        assert search["request"]["query"] == record["question"]
        assert model["request"]["messages"][-1]["content"] == record["question"]
        spans = [step["span"] for step in record["trace"]]
        ids = {span["id"] for span in spans}
        assert all(span["parent"] in ids for span in spans[1:])  # one tree, rooted at the call
    assert results["system_reports"]["varn_qa"]["app_spans"]["unjoined"] == 0


async def test_the_conversation_is_given_as_langchain_messages():
    system = LangChainApp(
        "support.langchain_apps:with_history", inputs={"question": "question", "chat_history": "history"}
    )
    example = Example(
        id="c1",
        question="And its founder?",
        turns=[
            {"role": "user", "content": "What is the capital of Varn?"},
            {"role": "assistant", "content": "Olm"},
        ],
    )
    prediction = await run_one(system, example)
    assert prediction.answer == "HumanMessage AIMessage HumanMessage"
    alone = await run_one(system, Example(id="c2", question="Who founded Olm?"))
    assert alone.answer == "HumanMessage"


def test_a_chain_that_raises_fails_its_example_keeping_its_trace_to_the_error(tmp_path):
    results = run_app(tmp_path, "langchain", {"runnable": "support.langchain_apps:raises", "inputs": "question"})
    assert results["counts"]["varn_qa"]["failed"] == 4
    for record in records(tmp_path):
        assert record["error"] == "RuntimeError: the reranker is down"
        (search,) = steps(record, "retrieval")  # the search before the error, with what it found
        assert search["request"]["query"] == record["question"] and len(search["docs"]) == 2
        failed = [step for step in record["trace"] if step.get("error")]
        assert failed and all("the reranker is down" in step["error"] for step in failed)
    assert not (tmp_path / "run" / "calls" / "app.jsonl").exists()  # nothing answered: --resume asks again


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (
            {"runnable": "support.langchain_apps:no_answer", "inputs": "question"},
            "AppReplyError: system langchain: runnable support.langchain_apps:no_answer returned dict: {'context': "
            "[Document(",
        ),
        (
            {"runnable": "support.langchain_apps:number_answer", "inputs": "question"},
            "AppReplyError: system langchain: runnable support.langchain_apps:number_answer returned int: 42 as its "
            "answer (answer), expected a string",
        ),
        (
            {**CHAIN, "answer": "reply.text"},
            "AppReplyError: system langchain: runnable support.langchain_apps:chain: answer=reply.text finds nothing "
            "in what it returned: no 'reply' in dict: {",
        ),
    ],
)
def test_an_answer_of_another_shape_is_one_line(tmp_path, options, line):
    results = run_app(tmp_path, "langchain", options)
    assert results["counts"]["varn_qa"]["failed"] == 4
    for record in records(tmp_path):
        assert record["error"].startswith(line) and "\n" not in record["error"]
    if options["runnable"].endswith("no_answer"):
        assert records(tmp_path)[0]["error"].endswith("name it with answer=PATH")


@pytest.mark.parametrize(
    ("runnable", "line"),
    [
        (
            "support.llamaindex_apps:query_engine",
            "system langchain: runnable=support.llamaindex_apps:query_engine is a RetrieverQueryEngine, not a "
            "LangChain Runnable (a chain, or a compiled LangGraph graph) (or a class or a function of no arguments "
            "that makes one)",
        ),
        (
            "support.langchain_apps:needs_arguments",
            "system langchain: runnable=support.langchain_apps:needs_arguments is a function of (question), not a "
            "LangChain Runnable",
        ),
        (
            "support.langchain_apps:format_docs",
            "system langchain: runnable=support.langchain_apps:format_docs is a function of (docs)",
        ),
        ("support.langchain_apps:nothing", "system langchain: runnable=support.langchain_apps:nothing: "),
    ],
)
def test_an_object_that_is_no_runnable_is_refused_before_the_run_in_one_line(tmp_path, runnable, line):
    with pytest.raises(ConfigError) as refused:
        run_app(tmp_path, "langchain", {"runnable": runnable})
    assert str(refused.value).startswith(line) and "\n" not in str(refused.value)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("module", ["openinference.instrumentation.langchain", "langchain_core"])
def test_a_missing_package_is_one_line_naming_the_extra(tmp_path, monkeypatch, module):
    monkeypatch.setitem(sys.modules, module, None)  # as Python finds a package that is not installed: ImportError
    with pytest.raises(ConfigError) as refused:
        run_app(tmp_path, "langchain", CHAIN)
    assert str(refused.value) == (
        "system langchain needs langchain-core and openinference-instrumentation-langchain, which is not installed "
        f"({module} cannot be imported): pip install 'ragbench[langchain]'"
    )
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("options", "line"),
    [
        ({"inputs": "query"}, "system langchain: inputs=query names no field of the request: one of question,"),
        ({"inputs": {"q": "question", "h": "turns"}}, "system langchain: inputs: h='turns' names no field"),
        ({"config": {"callbacks": []}}, "system langchain: config: callbacks is not a key the run passes on"),
    ],
)
def test_options_it_cannot_use_are_refused_in_one_line(tmp_path, options, line):
    with pytest.raises(ConfigError) as refused:
        run_app(tmp_path, "langchain", {"runnable": "support.langchain_apps:chain", **options})
    assert str(refused.value).startswith(line) and "\n" not in str(refused.value)


def test_a_runnable_that_blocks_the_event_loop_answers_and_is_reported(tmp_path):
    results = run_app(tmp_path, "langchain", {"runnable": "support.langchain_apps:blocks_loop", "inputs": "question"})
    assert_the_loop_holds_are_reported(results)


async def test_a_runnable_that_changes_what_it_is_given_changes_only_its_copy():
    inputs = {"history": "history", "meta": "meta", "extras": "extras"}
    await assert_changes_stay_in_its_copies(LangChainApp("support.langchain_apps:mutates", inputs=inputs))

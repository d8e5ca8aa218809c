"""The `llamaindex` system: real LlamaIndex engines (tests/support/llamaindex_apps.py: a VectorStoreIndex over the
Varn passages embedded by MockEmbedding, answered by MockLLM) run as a user's application. The documents ragbench
records are the response's source nodes, its spans those OpenInference's LlamaIndex instrumentor exports to the SDK
(one model call and one search an example, though the instrumentor nests a span in each), and each way it goes wrong
one line with nothing lost. Library versions these were written against: llama-index-core 0.14.25,
openinference-instrumentation-llama-index 4.6.1."""

from __future__ import annotations

import copy
import sys

import pytest

from ragbench.api import ConfigError, Example
from ragbench.plugins.llamaindex_app.system import LlamaIndexApp
from support.framework_runs import (  # noqa: F401  (exported: a fixture)
    assert_changes_stay_in_its_copies,
    assert_recorded_spans_are_exported,
    assert_the_loop_holds_are_reported,
    exported,
    records,
    run_app,
    run_one,
    steps,
)

# support.llamaindex_apps (and LlamaIndex with it) is imported by the tests that use it, not at collection: importing LlamaIndex
# costs seconds of CPU in every pytest-xdist worker, most of which never run these tests.
QUERY_ENGINE = {"engine": "support.llamaindex_apps:query_engine"}


def node_docs(response) -> list[dict]:
    """A response's source nodes as ragbench records them: id (the document's), title, text, score, node id."""
    from llama_index.core.schema import MetadataMode

    return [
        {
            "id": found.node.ref_doc_id,
            "title": found.node.metadata["title"],
            "text": found.node.get_content(metadata_mode=MetadataMode.NONE),
            "score": found.score,
            "metadata": {"node_id": found.node.node_id},
        }
        for found in response.source_nodes
    ]


@pytest.mark.parametrize("sync", [True, False])  # query in a thread, aquery on the loop
def test_a_query_engine_answers_with_its_source_nodes_one_model_call_and_search_each(tmp_path, exported, sync):
    from support import llamaindex_apps

    results = run_app(tmp_path, "llamaindex", {**QUERY_ENGINE, "sync": sync}, max_inflight=4)
    assert results["complete"], results.get("failures")
    assert_recorded_spans_are_exported(tmp_path, exported)
    for record in records(tmp_path):
        response = llamaindex_apps.query_engine.query(record["question"])
        assert record["prediction"]["answer"] == response.response == "text text text"  # MockLLM's words
        assert record["prediction"]["docs"] == node_docs(response)
        (search,) = steps(record, "retrieval")  # aretrieve, not the _aretrieve inside it
        assert [doc["text"] for doc in search["docs"]] == [doc["text"] for doc in record["prediction"]["docs"]]
        assert search["response"]["ids"] == [doc["metadata"]["node_id"] for doc in record["prediction"]["docs"]]
        (model,) = steps(record, "llm")  # complete, not the acomplete and apredict around it
        assert model["name"] == "MockLLM.complete" and record["question"] in model["request"]["prompt"]
        wrappers = [step for step in record["trace"] if step["span"]["kind"] == "llm" and step["kind"] == "custom"]
        assert [step["name"] for step in wrappers] == (
            ["MockLLM.predict"] if sync else ["MockLLM.apredict", "MockLLM.acomplete"]
        )
    assert results["model_cost"]["varn_qa"]["calls"] == 4
    assert results["system_reports"]["varn_qa"]["app_spans"]["unjoined"] == 0


def test_an_engine_made_by_a_function(tmp_path):
    results = run_app(tmp_path, "llamaindex", {"engine": "support.llamaindex_apps:make_query_engine"})
    assert results["complete"], results.get("failures")
    for record in records(tmp_path):
        assert len(record["prediction"]["docs"]) == 1  # its similarity_top_k
        assert [step["name"] for step in record["trace"][1:3]] == [
            "RetrieverQueryEngine.query",
            "RetrieverQueryEngine._query",
        ]


async def test_a_chat_engine_gets_each_examples_own_history_only():
    from support import llamaindex_apps

    system = LlamaIndexApp("support.llamaindex_apps:chat_engine")
    assert system.chat
    turns = [{"role": "user", "content": "What is the capital of Varn?"}, {"role": "assistant", "content": "Olm"}]
    example = Example(id="c1", question="Who founded it?", turns=copy.deepcopy(turns))
    first = await run_one(system, example)
    assert len(first.docs) == 2 and example.turns == turns  # the engine's memory took its own messages
    memory = llamaindex_apps.chat_engine.chat_history
    assert [(m.role.value, m.content) for m in memory[:2]] == [("user", turns[0]["content"]), ("assistant", "Olm")]
    await run_one(system, Example(id="c2", question="Where was Ansgar Pell born?"))
    memory = llamaindex_apps.chat_engine.chat_history
    assert memory[0].content == "Where was Ansgar Pell born?"  # the first example's turns are not in it


def test_an_engine_that_raises_fails_its_example_keeping_its_trace_to_the_error(tmp_path):
    results = run_app(tmp_path, "llamaindex", {"engine": "support.llamaindex_apps:fails_after_retrieval"})
    assert results["counts"]["varn_qa"]["failed"] == 4
    for record in records(tmp_path):
        assert record["error"] == "RuntimeError: the synthesizer is down"
        (search,) = steps(record, "retrieval")
        assert len(search["docs"]) == 2 and search["request"]["query"]
        assert any("the synthesizer is down" in (step.get("error") or "") for step in record["trace"])


def test_a_response_of_another_shape_is_one_line(tmp_path):
    results = run_app(tmp_path, "llamaindex", {"engine": "support.llamaindex_apps:not_a_response"})
    assert results["counts"]["varn_qa"]["failed"] == 4
    assert {record["error"] for record in records(tmp_path)} == {
        "AppReplyError: system llamaindex: engine support.llamaindex_apps:not_a_response returned list: ['Olm'], "
        "expected a response with its source_nodes"
    }


@pytest.mark.parametrize(
    ("engine", "line"),
    [
        (
            "support.langchain_apps:chain",
            "system llamaindex: engine=support.langchain_apps:chain is a RunnableSequence, not a LlamaIndex query "
            "engine or chat engine (index.as_query_engine() or index.as_chat_engine() makes one)",
        ),
        (
            "support.llamaindex_apps:index",
            "system llamaindex: engine=support.llamaindex_apps:index is a VectorStoreIndex, not a LlamaIndex query",
        ),
    ],
)
def test_an_object_that_is_no_engine_is_refused_before_the_run_in_one_line(tmp_path, engine, line):
    with pytest.raises(ConfigError) as refused:
        run_app(tmp_path, "llamaindex", {"engine": engine})
    assert str(refused.value).startswith(line) and "\n" not in str(refused.value)
    assert not (tmp_path / "run").exists()


def test_a_missing_instrumentor_is_one_line_naming_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "openinference.instrumentation.llama_index", None)
    with pytest.raises(ConfigError) as refused:
        run_app(tmp_path, "llamaindex", QUERY_ENGINE)
    assert str(refused.value) == (
        "system llamaindex needs llama-index-core and openinference-instrumentation-llama-index, which is not "
        "installed (openinference.instrumentation.llama_index cannot be imported): pip install 'ragbench[llamaindex]'"
    )


def test_an_engine_whose_async_path_blocks_the_event_loop_answers_and_is_reported(tmp_path):
    results = run_app(tmp_path, "llamaindex", {"engine": "support.llamaindex_apps:blocks_loop", "sync": False})
    assert_the_loop_holds_are_reported(results)

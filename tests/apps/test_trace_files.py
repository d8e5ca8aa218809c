"""`ragbench score --traces FILE`: an application's traces exported elsewhere, scored as its predictions. The same
traces - made by the OpenTelemetry SDK running tests/support/rag_apps's application, one trace an example, its root
span naming the example (`ragbench.example.id`) and holding the answer (`output.value`) - score alike written as
OTLP/JSON (the SDK's own OTLP encoding, ids in hex as the Collector's file exporter writes them), as a real Phoenix's
REST API gave them (arize-phoenix 20.26.1 served locally: tests/data/apps/README.md) and as Langfuse's observations
(written here from its public API's schema: a Langfuse server needs Postgres and ClickHouse), with the search's
documents as the passages and the model calls in the trace."""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone

import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from conftest import TEST_DATA
from ragbench.api.apps import Span, from_readable
from support.helpers import cli_here, samples
from support.rag_apps import CORPUS, QUESTIONS, varn_task, words

MODEL_TOKENS = 7


def traced_answers() -> list:
    """The SDK's spans of four calls of a small RAG application, one trace each."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("app")
    for qid, question, _ in QUESTIONS:
        with tracer.start_as_current_span("rag") as root:
            root.set_attribute("openinference.span.kind", "CHAIN")
            root.set_attribute("ragbench.example.id", qid)
            root.set_attribute("input.value", question)
            with provider.get_tracer("search").start_as_current_span("search") as span:
                span.set_attribute("openinference.span.kind", "RETRIEVER")
                ranked = sorted(CORPUS, key=lambda p: (-len(words(question) & words(p["text"])), p["id"]))[:2]
                for n, passage in enumerate(ranked):
                    span.set_attribute(f"retrieval.documents.{n}.document.id", passage["id"])
                    span.set_attribute(f"retrieval.documents.{n}.document.content", passage["text"])
            with tracer.start_as_current_span("llm") as llm:
                llm.set_attribute("openinference.span.kind", "LLM")
                llm.set_attribute("llm.model_name", "toy-model")
                llm.set_attribute("llm.token_count.prompt", MODEL_TOKENS)
                llm.set_attribute("llm.token_count.completion", 1)
            root.set_attribute("output.value", json.dumps({"answer": ranked[0]["text"].split()[0]}))
    return list(exporter.get_finished_spans())


def otlp_json_line(spans) -> str:
    """An OTLP/JSON export request: the SDK's OTLP encoding in protobuf's JSON mapping, ids turned to hex."""
    data = json_format.MessageToDict(encode_spans(spans))

    def hexed(value):
        if isinstance(value, dict):
            return {
                key: base64.b64decode(item).hex() if key in ("traceId", "spanId", "parentSpanId") else hexed(item)
                for key, item in value.items()
            }
        return [hexed(item) for item in value] if isinstance(value, list) else value

    return json.dumps(hexed(data))


def iso(nanoseconds: int) -> str:
    return datetime.fromtimestamp(nanoseconds / 1e9, tz=timezone.utc).isoformat()


def langfuse_observations(spans) -> dict:
    """The spans as Langfuse's observations API gives them."""
    data = []
    for readable in spans:
        span = from_readable(readable)
        kind = span.attributes["openinference.span.kind"]
        observation = {
            "id": span.span_id,
            "traceId": span.trace_id,
            "parentObservationId": span.parent_id,
            "name": span.name,
            "startTime": iso(span.start_ns).replace("+00:00", "Z"),
            "endTime": iso(span.end_ns).replace("+00:00", "Z"),
            "type": {"LLM": "GENERATION", "RETRIEVER": "RETRIEVER"}.get(kind, "SPAN"),
            "level": "DEFAULT",
            "metadata": {},
        }
        if kind == "CHAIN":
            observation["metadata"] = {"ragbench.example.id": span.attributes["ragbench.example.id"]}
            observation["input"] = span.attributes["input.value"]
            observation["output"] = json.loads(span.attributes["output.value"])
        elif kind == "LLM":
            observation.update(model="toy-model", usageDetails={"input": MODEL_TOKENS, "output": 1, "total": 8})
        else:
            docs = [
                {
                    "id": span.attributes[f"retrieval.documents.{n}.document.id"],
                    "page_content": span.attributes[f"retrieval.documents.{n}.document.content"],
                }
                for n in range(2)
            ]
            observation["output"] = docs
        data.append(observation)
    return {"data": data, "meta": {"page": 1}}


@pytest.mark.parametrize("form", ["otlp", "phoenix", "langfuse"])
def test_exported_traces_are_scored_as_the_applications_predictions(tmp_path, form):
    spans = traced_answers()
    path = tmp_path / f"traces.{form}.json"
    if form == "otlp":  # one export request a line, as the Collector's file exporter writes them
        path.write_text("\n".join(otlp_json_line(spans[n : n + 3]) for n in range(0, len(spans), 3)) + "\n")
    elif form == "phoenix":  # the same spans as a real Phoenix's REST API gave them (tests/data/apps/README.md)
        path.write_bytes((TEST_DATA / "apps" / "phoenix_spans.json").read_bytes())
    else:
        path.write_text(json.dumps(langfuse_observations(spans)))
    task = varn_task(tmp_path / "task")
    done = cli_here(
        "score",
        "--task",
        task,
        "--traces",
        str(path),
        "--trace-format",
        form,
        "--output",
        str(tmp_path / "run"),
        "--no-progress",
        "--bootstrap-iters",
        "10",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["details"]["varn_qa"]["em"]["value"] == 0.25  # the top passage's first word: Olm for q1
    assert results["model_cost"]["varn_qa"]["prompt_tokens"] == 4 * MODEL_TOKENS
    for record in samples(tmp_path / "run", "varn_qa"):
        search = next(step for step in record["trace"] if step["kind"] == "retrieval")
        assert [doc["id"] for doc in record["prediction"]["docs"]] == search["response"]["ids"]
        assert len(record["prediction"]["docs"]) == 2 and all(doc["text"] for doc in record["prediction"]["docs"])
        assert [step["kind"] for step in record["trace"]] == ["custom", "custom", "retrieval", "llm"]


def test_a_trace_file_must_say_which_example_each_trace_answers(tmp_path):
    spans = traced_answers()
    path = tmp_path / "traces.jsonl"
    path.write_text(otlp_json_line(spans) + "\nnot json\n")
    task = varn_task(tmp_path / "task")
    done = cli_here(
        "score",
        "--task",
        task,
        "--traces",
        str(path),
        "--match-attribute",
        "app.request.id",
        "--output",
        str(tmp_path / "run"),
        "--no-progress",
    )
    assert done.returncode != 0
    for record in samples(tmp_path / "run", "varn_qa"):
        assert record["error"] == f"MissingTrace: {path} has no trace whose app.request.id is {record['id']!r}"
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    report = results["system_reports"]["varn_qa"]
    assert report["errors"] == [f"{path}:2: not JSON (Expecting value: line 1 column 1 (char 0))"]
    assert report["notes"] == [f"4 trace(s) of {path} have no app.request.id attribute: they answer no example"]
    both = cli_here("score", "--task", task, "--traces", str(path), "--predictions", str(path))
    assert both.returncode != 0 and "give --predictions FILE or --traces FILE (one of them)" in both.stderr


def test_a_span_read_back_is_the_span_written():
    for readable in traced_answers():
        span = from_readable(readable)
        assert Span.from_dict(json.loads(json.dumps(span.to_dict()))) == span

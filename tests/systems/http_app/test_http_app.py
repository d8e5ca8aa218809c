"""The `http` system against a real HTTP service started by the test (tests/support/rag_service.py), instrumented with
the OpenTelemetry SDK and exporting OTLP/HTTP to the receiver the run starts: its passages are the prediction's
documents, its spans join their example by the request's traceparent and equal what the SDK exported, and a service
that fails, hangs, streams without end, answers in another shape, sends spans of no example or what is not OTLP
costs one clear line and nothing else."""

from __future__ import annotations

import json
import socket

import pytest

from ragbench.api import ConfigError
from ragbench.api.apps import Span, from_readable
from ragbench.testing import run_eval
from support.helpers import samples
from support.rag_apps import QUESTIONS, varn_task
from support.rag_service import rag_service


def run_http(tmp_path, url, resume=False, price_table=None, **system_args):
    return run_eval(
        [varn_task(tmp_path / "task")],
        system="http",
        system_args={"url": url, "backoff_base": 0.0, **system_args},
        progress=False,
        output=str(tmp_path / "run"),
        resume=resume,
        price_table=price_table,
    ).results


def app_lines(tmp_path):
    return [json.loads(line) for line in (tmp_path / "run" / "calls" / "app.jsonl").read_text().splitlines()]


def test_an_openai_compatible_service_is_scored_with_its_passages_and_the_spans_it_exported(tmp_path):
    with rag_service() as (url, service):
        results = run_http(tmp_path, f"{url}/v1")
        exported = list(service.memory.get_finished_spans())
    assert results["complete"], results.get("failures")
    assert results["details"]["varn_qa"]["em"]["value"] == 0.25
    by_trace: dict[str, list[Span]] = {}
    for span in exported:
        by_trace.setdefault(f"{span.context.trace_id:032x}", []).append(from_readable(span))
    for line in app_lines(tmp_path):  # received over OTLP/HTTP (protobuf) = what the service's SDK ended
        received = [Span.from_dict(span) for span in line["spans"]]
        (trace_id,) = {span.trace_id for span in received}
        assert sorted(received, key=lambda s: s.span_id) == sorted(by_trace.pop(trace_id), key=lambda s: s.span_id)
    assert by_trace == {}  # every trace the service made joined an example
    for record in samples(tmp_path / "run", "varn_qa"):
        assert [step["kind"] for step in record["trace"]] == ["custom", "custom", "retrieval", "llm"]
        call, server, search, chat = record["trace"]
        assert server["name"] == "POST /v1/chat/completions" and server["span"]["parent"] == call["span"]["id"]
        assert {search["span"]["parent"], chat["span"]["parent"]} == {server["span"]["id"]}
        assert search["request"]["query"].endswith(record["question"])
        docs = record["prediction"]["docs"]
        assert [doc["id"] for doc in docs] == search["response"]["ids"] and all(doc["text"] for doc in docs)
        assert chat["role"] == "app:toy-model" and chat["completion_tokens"] == 1
        assert chat["request"]["messages"][0]["content"] == search["request"]["query"]
    assert results["system_reports"]["varn_qa"]["app_spans"]["joined"] == 12  # server, search, chat: 4 examples
    assert results["model_cost"]["varn_qa"]["calls"] == 4


def test_any_json_api_through_a_declared_body_and_mapping(tmp_path):
    with rag_service() as (url, service):
        results = run_http(
            tmp_path,
            f"{url}/ask",
            preset="json",
            body={"query": "{{ question }}", "k": 1},
            answer="result.text",
            passages="result.sources",
            passage_text="text",
        )
    assert results["complete"], results.get("failures")
    for record in samples(tmp_path / "run", "varn_qa"):
        assert len(record["prediction"]["docs"]) == 1
        assert record["prediction"]["answer"] == record["prediction"]["docs"][0]["text"].split()[0]


def test_a_service_that_answers_500_is_tried_again_then_fails_its_example_in_one_line(tmp_path):
    with rag_service() as (url, service):
        results = run_http(tmp_path, f"{url}/500", max_retries=2)
        assert service.hits["/500"] == 3 * len(QUESTIONS)
    errors = {record["error"] for record in samples(tmp_path / "run", "varn_qa")}
    assert errors == {
        f"HttpAppError: http: POST {url}/500 answered 500 Internal Server Error after 3 tries: "
        '\'{"error": "the index is down"}\''
    }
    assert results["counts"]["varn_qa"]["failed"] == 4


def test_a_busy_service_is_tried_again(tmp_path):
    with rag_service() as (url, service):
        results = run_http(tmp_path, f"{url}/flaky")
        assert service.hits["/flaky"] == 2 * len(QUESTIONS)
    assert results["complete"], results.get("failures")


@pytest.mark.parametrize(
    ("path", "options", "error"),
    [
        ("/hang", {"request_timeout": 0.5, "max_retries": 0}, "did not answer within 0.5 s after 1 tries (ReadTimeout"),
        ("/stream", {"timeout": 1}, "/stream did not finish within timeout=1 s"),
        ("/stream", {"max_reply_bytes": 10_000}, "answered more than max_reply_bytes=10,000 bytes"),
        ("/wrong", {}, "http: the reply has no answer at 'choices[0].message.content' (found NoneType: None; "),
        ("/not-json", {}, "answered what is not JSON (Expecting value: line 1 column 1 (char 0)): '<html>Olm</html>'"),
    ],
)
def test_a_service_that_hangs_streams_or_answers_in_another_shape_fails_its_example_in_one_line(
    tmp_path, path, options, error
):
    with rag_service() as (url, service):
        results = run_http(tmp_path, f"{url}{path}", **options)
    for record in samples(tmp_path / "run", "varn_qa"):
        assert error in record["error"] and "\n" not in record["error"]
    assert results["counts"]["varn_qa"]["failed"] == 4


def test_spans_of_no_example_and_exports_that_are_no_otlp_are_counted(tmp_path):
    with rag_service() as (url, service):
        results = run_http(tmp_path, f"{url}/stray-spans", span_wait=0.2)
    report = results["system_reports"]["varn_qa"]
    assert report["app_spans"]["unjoined"] == 12 and report["app_spans"]["joined"] == 0
    assert any(note.startswith("12 span(s) joined no example (traces ") for note in report["notes"])
    assert any(note.startswith("4 example(s)' spans did not arrive within span_wait=0.2 s") for note in report["notes"])
    assert results["complete"]  # the answers stand; what is missing is said

    with rag_service() as (url, service):
        results = run_http(tmp_path / "bad", f"{url}/bad-otlp")
        assert service.otlp_statuses == [400, 400] * len(QUESTIONS)
    report = results["system_reports"]["varn_qa"]
    assert report["app_spans"]["malformed_exports"] == 8 and report["app_spans"]["joined"] == 12
    assert "8 OTLP export(s) that were not OTLP were refused (answered 400, counted here)" in report["notes"]


def test_headers_come_from_the_environment_and_are_never_stored_or_shown(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_TOKEN", "tok-3141592653")
    with rag_service() as (url, service):
        run_http(tmp_path, f"{url}/echo-auth", headers={"Authorization": "Bearer ${RAG_TOKEN}"}, max_retries=0)
    (error,) = {record["error"] for record in samples(tmp_path / "run", "varn_qa")}
    assert "bad token Bearer ***" in error
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert b"tok-3141592653" not in path.read_bytes(), path
    monkeypatch.delenv("RAG_TOKEN")
    with pytest.raises(ConfigError, match=r"system http: header Authorization takes \$\{RAG_TOKEN\}, which is not set"):
        run_http(tmp_path / "unset", "http://127.0.0.1:9/v1", headers={"Authorization": "Bearer ${RAG_TOKEN}"})


def test_a_service_started_with_its_exporter_on_a_fixed_port_batching_its_spans(tmp_path):
    with socket.socket() as probe:  # a free port for the receiver, given to the service as it starts
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with rag_service(otlp_endpoint=f"http://127.0.0.1:{port}/v1/traces", batch=True) as (url, service):
        results = run_http(tmp_path, f"{url}/v1", otlp_port=port)
    assert results["complete"]
    assert results["system_reports"]["varn_qa"]["app_spans"]["joined"] == 12
    assert not any(
        record["prediction"]["extras"]["app"]["spans_missing"] for record in samples(tmp_path / "run", "varn_qa")
    )

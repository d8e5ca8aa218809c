"""The OTLP/HTTP receiver a run starts for an application over HTTP: a real server on 127.0.0.1 that takes the
OpenTelemetry SDK's own exporter's exports (protobuf, gzip-compressed or not) and OTLP/JSON, joins each span to its
example by trace id, and refuses what is not OTLP with a 400 saying why - counted, never a crash. In process, the root
span an example's spans join it by."""

from __future__ import annotations

import json
from urllib.error import HTTPError
from urllib.request import Request, urlopen

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

from ragbench._apps import capture
from ragbench._apps.collector import SpanCollector, new_trace_ids
from ragbench._apps.otlp import Export, MalformedOtlp, parse_export
from ragbench._apps.receiver import OtlpReceiver
from ragbench._apps.spans import from_readable


@pytest.fixture
def receiver():
    collector = SpanCollector()
    server = OtlpReceiver(collector)
    try:
        yield server, collector
    finally:
        server.close()


def post(url: str, body: bytes, content_type: str) -> tuple[int, bytes]:
    try:
        with urlopen(Request(url, data=body, headers={"Content-Type": content_type}), timeout=30) as answer:
            return answer.status, answer.read()
    except HTTPError as refused:
        return refused.code, refused.read()


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_the_sdks_exports_join_their_example_and_equal_what_it_ended(receiver, compression):
    server, collector = receiver
    trace_id, root = new_trace_ids()
    example = collector.open(trace_id, root)
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=server.endpoint, compression=compression))
    )
    tracer = provider.get_tracer("service")
    parent = set_span_in_context(
        NonRecordingSpan(SpanContext(int(trace_id, 16), int(root, 16), is_remote=True, trace_flags=TraceFlags(1)))
    )
    with tracer.start_as_current_span("POST /ask", context=parent) as entry:
        entry.set_attribute("http.route", "/ask")
        with tracer.start_as_current_span("search") as search:
            search.set_attribute("retrieval.documents.0.document.content", "Varn's capital is Olm. \u2028 \U0001f600")
    with tracer.start_as_current_span("another request"):  # a trace of no example
        pass
    provider.shutdown()
    received = collector.take(example)
    sent = [from_readable(span) for span in memory.get_finished_spans() if span.name != "another request"]
    assert sorted(received, key=lambda s: s.span_id) == sorted(sent, key=lambda s: s.span_id)
    assert collector.report() == {
        "joined": 2,
        "unjoined": 1,
        "late": 0,
        "rejected": 0,
        "malformed_exports": 0,
        "unjoined_traces": [collector.report()["unjoined_traces"][0]],
    }


def test_otlp_json_is_taken_and_what_is_not_otlp_is_refused_with_why(receiver):
    server, collector = receiver
    trace_id, root = new_trace_ids()
    example = collector.open(trace_id, root)
    span = {
        "traceId": trace_id,
        "spanId": "1" * 16,
        "parentSpanId": root,
        "name": "rag",
        "kind": 1,
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
        "attributes": [{"key": "answer", "value": {"stringValue": "Olm"}}],
    }
    short = {**span, "spanId": "2" * 8}  # 4 bytes: not a span id
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span, short]}]}]}).encode()
    status, answer = post(server.endpoint, body, "application/json")
    assert status == 200 and json.loads(answer)["partialSuccess"]["rejectedSpans"] == "1"
    (got,) = collector.take(example)
    assert (got.name, got.attributes, got.start_ns, got.parent_id) == ("rag", {"answer": "Olm"}, 1000, root)
    assert post(server.endpoint, b"{", "application/json")[0] == 400
    status, why = post(
        server.endpoint,
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{**span, "traceId": "not hex"}]}]}]}).encode(),
        "application/json",
    )
    assert status == 400 and b"traceId 'not hex' is not hex (OTLP/JSON writes ids as hex)" in why
    status, why = post(server.endpoint, b"<xml/>", "text/xml")
    assert status == 400 and b"OTLP/HTTP sends application/x-protobuf or application/json" in why
    assert post(server.endpoint.replace("/v1/traces", "/v1/metrics"), b"", "application/x-protobuf")[0] == 404
    report = collector.report()
    assert (report["malformed_exports"], report["rejected"], report["joined"]) == (3, 1, 1)


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=200), content_type=st.sampled_from(["application/x-protobuf", "application/json"]))
def test_any_body_is_spans_or_one_line_saying_why(body, content_type):
    try:
        export = parse_export(body, content_type)
    except MalformedOtlp as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(export, Export)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=12), children, max_size=3),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    spans=st.lists(
        st.dictionaries(
            st.sampled_from(["traceId", "spanId", "name", "kind", "attributes", "startTimeUnixNano", "status"]),
            json_values,
        ),
        max_size=3,
    )
)
def test_any_otlp_json_shape_is_spans_or_one_line_saying_why(spans):
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()
    try:
        export = parse_export(body, "application/json")
    except MalformedOtlp as exc:
        assert "\n" not in str(exc)
    else:
        assert all(len(span.trace_id) == 32 and len(span.span_id) == 16 for span in export.spans)


def test_an_in_process_root_no_one_sees_is_ids_alone_and_one_an_exporter_sees_is_a_span(monkeypatch):
    """In process, an example's spans hang from a root of ragbench's. Where ragbench's processor is the provider's
    only one, the root is its ids alone (an SDK span would be made and ended for no one); where an exporter is on the
    provider, it is a span the exporter sees, naming the example. The application's spans join their example alike."""
    provider = TracerProvider()
    provider.add_span_processor(capture._ROUTER)
    monkeypatch.setattr(capture, "tracer_provider", lambda: provider)
    made = capture.InProcessCapture()
    try:

        def ask(example_id: str) -> tuple[bool, str, str, list]:
            with made.example(example_id, "varn_qa") as spans:
                recording = trace.get_current_span().is_recording()
                with provider.get_tracer("app").start_as_current_span("rag"):
                    with provider.get_tracer("app").start_as_current_span("search"):
                        pass
            return recording, spans.trace_id, spans.root, made.collector.take(spans)

        recording, trace_id, root, spans = ask("q1")
        assert not recording  # ids alone
        assert [span.name for span in spans] == ["search", "rag"]
        assert {span.trace_id for span in spans} == {trace_id} and spans[1].parent_id == root
        exported = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exported))
        recording, trace_id, root, spans = ask("q2")
        assert recording
        assert [span.name for span in spans] == ["search", "rag"]
        assert {span.trace_id for span in spans} == {trace_id} and spans[1].parent_id == root
        (seen,) = [span for span in exported.get_finished_spans() if span.name == "ragbench example"]
        assert f"{seen.context.span_id:016x}" == root and f"{seen.context.trace_id:032x}" == trace_id
        assert dict(seen.attributes or {}) == {"ragbench.example.id": "q2", "ragbench.task": "varn_qa"}
        assert made.collector.report()["joined"] == 4 and made.collector.report()["unjoined"] == 0
    finally:
        made.close()

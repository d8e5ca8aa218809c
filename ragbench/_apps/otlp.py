"""OTLP trace exports read into `Span`s: the body of an OTLP/HTTP request (`ExportTraceServiceRequest`, binary
protobuf or OTLP/JSON) and the lines of an OTLP/JSON trace file (what the OpenTelemetry Collector's file exporter
writes: one request a line). The messages are opentelemetry-proto's; OTLP/JSON differs from protobuf's JSON mapping in
its ids, which are hex, not base64 (`_hex_ids_to_base64` turns them before protobuf parses the rest).

A body that is neither is `MalformedOtlp` (what the receiver answers 400 with); a span whose trace or span id is not
16 or 8 bytes is left out and counted (`Export.rejected`), as OTLP's partial success reports it.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._values.json_values import JsonObject, JsonValue
from .spans import KINDS, STATUSES, Span, json_attribute

if TYPE_CHECKING:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

JSON_TYPES = ("application/json",)
PROTOBUF_TYPES = ("application/x-protobuf", "application/protobuf")


class MalformedOtlp(ValueError):
    """A body that is no OTLP trace export, saying why in one line."""


@dataclass(frozen=True)
class Export:
    """The spans of one export, and how many of its spans were refused (ids of the wrong length)."""

    spans: list[Span]
    rejected: int = 0


def any_value(value: AnyValue) -> JsonValue:
    """An OTLP `AnyValue` as JSON (ragbench._apps.spans.json_attribute's forms)."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [any_value(item) for item in value.array_value.values]
    if which == "kvlist_value":
        return key_values(value.kvlist_value.values)
    return json_attribute(getattr(value, which))


def key_values(items: Any) -> JsonObject:
    pairs: list[KeyValue] = list(items)
    return {pair.key: any_value(pair.value) for pair in pairs}


def spans_of(request: ExportTraceServiceRequest) -> Export:
    """The spans a decoded export request carries, each with its resource's service.name."""
    spans: list[Span] = []
    rejected = 0
    for resource_spans in request.resource_spans:
        service = key_values(resource_spans.resource.attributes).get("service.name")
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                if len(span.trace_id) != 16 or len(span.span_id) != 8 or len(span.parent_span_id) not in (0, 8):
                    rejected += 1
                    continue
                spans.append(
                    Span(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex() or None,
                        name=span.name,
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        kind=KINDS[span.kind] if 0 <= span.kind < len(KINDS) else "UNSPECIFIED",
                        status=STATUSES[span.status.code] if 0 <= span.status.code < len(STATUSES) else "UNSET",
                        status_message=span.status.message,
                        attributes=key_values(span.attributes),
                        events=[
                            {
                                "name": event.name,
                                "time_ns": event.time_unix_nano,
                                "attributes": key_values(event.attributes),
                            }
                            for event in span.events
                        ],
                        service=service if isinstance(service, str) else None,
                    )
                )
    return Export(spans, rejected)


def _hex_ids_to_base64(data: Any) -> None:
    """OTLP/JSON's hex trace and span ids, in place, as the base64 protobuf's JSON mapping reads for bytes; an id that
    is no hex text is MalformedOtlp."""
    if isinstance(data, dict):
        for key in ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id"):
            value = data.get(key)
            if isinstance(value, str):
                try:
                    data[key] = base64.b64encode(bytes.fromhex(value)).decode("ascii")
                except ValueError:
                    raise MalformedOtlp(f"{key} {value[:40]!r} is not hex (OTLP/JSON writes ids as hex)") from None
        for item in data.values():
            _hex_ids_to_base64(item)
    elif isinstance(data, list):
        for item in data:
            _hex_ids_to_base64(item)


def request_from_json(data: Any) -> ExportTraceServiceRequest:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    if not isinstance(data, dict):
        raise MalformedOtlp(f"expected an object with resourceSpans, got {type(data).__name__}")
    _hex_ids_to_base64(data)
    request = ExportTraceServiceRequest()
    try:
        json_format.ParseDict(data, request, ignore_unknown_fields=True)
        return request
    except (json_format.ParseError, TypeError, ValueError, binascii.Error) as exc:
        raise MalformedOtlp(f"not an OTLP/JSON trace export ({str(exc)[:200]})") from None


def parse_export(body: bytes, content_type: str) -> Export:
    """The spans of an OTLP/HTTP trace export body of `content_type` (its media type, parameters ignored)."""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    media = content_type.split(";")[0].strip().lower()
    if media in JSON_TYPES:
        try:
            data = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise MalformedOtlp(f"not JSON ({str(exc)[:120]})") from None
        return spans_of(request_from_json(data))
    if media in PROTOBUF_TYPES:
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except (DecodeError, RecursionError) as exc:
            raise MalformedOtlp(f"not a protobuf ExportTraceServiceRequest ({str(exc)[:120]})") from None
        return spans_of(request)
    raise MalformedOtlp(
        f"content type {content_type[:80]!r}: OTLP/HTTP sends application/x-protobuf or application/json"
    )


def file_spans(lines: Iterator[tuple[int, str]], where: str) -> Iterator[tuple[int, Export | MalformedOtlp]]:
    """The spans of each line of an OTLP/JSON trace file, (line number, its export or why it is none)."""
    for number, line in lines:
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            yield number, spans_of(request_from_json(data))
        except (json.JSONDecodeError, RecursionError) as exc:
            yield number, MalformedOtlp(f"{where}:{number}: not JSON ({str(exc)[:120]})")
        except MalformedOtlp as exc:
            yield number, MalformedOtlp(f"{where}:{number}: {exc}")

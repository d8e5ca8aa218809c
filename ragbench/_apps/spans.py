"""One OpenTelemetry span as ragbench keeps it (`Span`), whatever it came from: a span the SDK ended in this process
(`from_readable`), one an OTLP export carried (ragbench._apps.otlp), a line of a trace file (`from_dict`).

Ids are lowercase hex (32 digits a trace id, 16 a span id), as W3C `traceparent` and OTLP/JSON write them; times are
nanoseconds since the epoch; attribute values are JSON (a list for an array, an object for a key-value list, base64
text for bytes). A span's `to_dict` is the form the record of an application's call keeps (calls/app.jsonl).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .._values.json_values import JsonObject, JsonValue

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")  # OTLP's numbering
STATUSES = ("UNSET", "OK", "ERROR")


def json_attribute(value: object) -> JsonValue:
    """An attribute's value as JSON: sequences as lists, mappings as objects, bytes as base64, a float that is not
    finite as its text (JSON holds none)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Mapping):
        return {str(key): json_attribute(item) for key, item in value.items()}
    if isinstance(value, Sequence):
        return [json_attribute(item) for item in value]
    return str(value)


@dataclass(frozen=True)
class Span:
    """One ended span: its place in its trace, what it did and when."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    kind: str = "INTERNAL"
    status: str = "UNSET"
    status_message: str = ""
    attributes: JsonObject = field(default_factory=dict)
    events: list[JsonObject] = field(default_factory=list)  # {"name", "time_ns", "attributes"}
    service: str | None = None  # its resource's service.name

    @property
    def seconds(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e9

    def to_dict(self) -> JsonObject:
        out: JsonObject = {
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "parent_id": self.parent_id,
            "name": self.name,
            "kind": self.kind,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
            "status": self.status,
        }
        if self.status_message:
            out["status_message"] = self.status_message
        if self.attributes:
            out["attributes"] = self.attributes
        if self.events:
            out["events"] = list(self.events)
        if self.service is not None:
            out["service"] = self.service
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Span:
        """From `to_dict`'s form; a missing or mistyped field is a ValueError naming it."""

        def text(key: str) -> str:
            value = data.get(key)
            if not isinstance(value, str):
                raise ValueError(f"a span's {key!r} is {type(value).__name__}, expected a string")
            return value

        def number(key: str) -> int:
            value = data.get(key)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"a span's {key!r} is {type(value).__name__}, expected a whole number")
            return value

        parent = data.get("parent_id")
        attributes, events = data.get("attributes") or {}, data.get("events") or []
        if not isinstance(attributes, dict) or not isinstance(events, list):
            raise ValueError("a span's attributes are not an object, or its events not a list")
        service = data.get("service")
        return cls(
            trace_id=text("trace_id"),
            span_id=text("span_id"),
            parent_id=parent if isinstance(parent, str) and parent else None,
            name=text("name"),
            start_ns=number("start_ns"),
            end_ns=number("end_ns"),
            kind=str(data.get("kind") or "INTERNAL"),
            status=str(data.get("status") or "UNSET"),
            status_message=str(data.get("status_message") or ""),
            attributes={str(key): json_attribute(value) for key, value in attributes.items()},
            events=[event for event in events if isinstance(event, dict)],
            service=service if isinstance(service, str) else None,
        )


_HEX = {32: "032x", 16: "016x"}  # a trace id's format, a span id's


def hex_id(value: int, digits: int) -> str:
    return format(value, _HEX.get(digits) or f"0{digits}x")


def from_readable(span: ReadableSpan) -> Span:
    """A span the OpenTelemetry SDK ended in this process (what its exporters are handed)."""
    context = span.context
    parent = span.parent
    status = span.status
    resource = span.resource.attributes if span.resource is not None else {}
    service = resource.get("service.name")
    return Span(
        trace_id=hex_id(context.trace_id, 32) if context is not None else "",
        span_id=hex_id(context.span_id, 16) if context is not None else "",
        parent_id=hex_id(parent.span_id, 16) if parent is not None else None,
        name=span.name,
        start_ns=span.start_time or 0,
        end_ns=span.end_time or 0,
        kind=span.kind.name,
        status=status.status_code.name,
        status_message=status.description or "",
        attributes={  # a text or a whole number (most are) as it is, with no call
            key: value if isinstance(value, (str, int)) else json_attribute(value)
            for key, value in _plain(span.attributes).items()
        },
        events=[
            {
                "name": event.name,
                "time_ns": event.timestamp,
                "attributes": {key: json_attribute(value) for key, value in (event.attributes or {}).items()},
            }
            for event in span.events
        ],
        service=service if isinstance(service, str) else None,
    )


def _plain(attributes: Mapping[str, object] | None) -> dict[str, object]:
    """A span's attributes as a dict: the SDK's read-only view of them copied as its dict is (a `dict()` of the view
    reads them one key at a time, each through the SDK's mapping)."""
    if isinstance(attributes, MappingProxyType):
        copied = attributes.copy()
        if isinstance(copied, dict):
            return copied
    return dict(attributes or {})

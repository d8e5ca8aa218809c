"""Trace files an application's spans were exported to, read as `Span`s for `ragbench score --traces FILE`:

- `otlp`: OTLP/JSON, one `ExportTraceServiceRequest` a line (the OpenTelemetry Collector's file exporter), or one
  such request as the whole file;
- `phoenix`: Arize Phoenix's spans as its REST API gives them (`GET /v1/projects/{project}/spans`: a page
  `{"data": [span, ...]}`, a list of spans, or one span or page a line), each `{"name", "context": {"trace_id",
  "span_id"}, "parent_id", "span_kind", "start_time", "end_time", "status_code", "status_message", "attributes",
  "events"}` with ISO times and OpenInference attributes (flat or nested);
- `langfuse`: Langfuse's observations as its public API gives them (`GET /api/public/observations`: `{"data":
  [observation, ...]}`, a list, or one a line), each `{"id", "traceId", "parentObservationId", "type", "name",
  "startTime", "endTime", "model", "input", "output", "metadata", "usageDetails" | "usage", "level",
  "statusMessage"}`, read into OpenInference's attributes (a GENERATION an LLM span with its model, tokens and
  messages, a RETRIEVER a search with the documents of its output, a TOOL a tool call, others chains) with the
  observation's metadata beside them.

A line or item that cannot be read is one problem naming the file and the line (the others are read); a file that
cannot be read at all is a ConfigError.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from .._errors import ConfigError
from .._storage.given_files import given_text
from .._values.json_values import JsonObject
from .conventions import flat_attributes
from .otlp import MalformedOtlp, file_spans, request_from_json, spans_of
from .spans import Span, json_attribute

FORMATS = ("otlp", "phoenix", "langfuse")


def read_trace_file(path: str, form: str) -> tuple[list[Span], list[str]]:
    """The spans of the trace file at `path` in format `form` (one of `FORMATS`), and the problems of the lines or
    items that could not be read."""
    if form not in FORMATS:
        raise ConfigError(f"--trace-format {form}: one of {', '.join(FORMATS)}")
    text = given_text(path, f"a trace file ({form})", "--traces")
    if form == "otlp":
        return _otlp(text, path)
    items, problems = _items(text, path)
    read = _phoenix_span if form == "phoenix" else _langfuse_span
    spans = []
    for where, item in items:
        try:
            spans.append(read(item))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            problems.append(f"{path}:{where}: not a {form} span ({type(exc).__name__}: {str(exc)[:120]})")
    return spans, problems


def _otlp(text: str, path: str) -> tuple[list[Span], list[str]]:
    spans: list[Span] = []
    problems: list[str] = []
    stripped = text.strip()
    if stripped.startswith("{") and "\n" in stripped:  # one request written over several lines, or one a line
        try:
            whole = json.loads(stripped)
        except json.JSONDecodeError:
            whole = None
        if whole is not None:
            try:
                return spans_of(request_from_json(whole)).spans, problems
            except MalformedOtlp as exc:
                return spans, [f"{path}: {exc}"]
    for _, read in file_spans(_lines(text), path):
        if isinstance(read, MalformedOtlp):
            problems.append(str(read))
        else:
            spans.extend(read.spans)
            if read.rejected:
                problems.append(f"{path}: {read.rejected} span(s) with ids of the wrong length left out")
    return spans, problems


def _items(text: str, path: str) -> tuple[list[tuple[str, Any]], list[str]]:
    """The items of a JSON file (a page {"data": [...]}, a list) or of a JSONL file (an item or a page a line)."""
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if whole is not None:
        found = whole.get("data") if isinstance(whole, dict) and "data" in whole else whole
        found = found if isinstance(found, list) else [found]
        return [(f"item {n + 1}", item) for n, item in enumerate(found)], []
    items: list[tuple[str, Any]] = []
    problems: list[str] = []
    for number, line in _lines(text):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: not JSON ({exc.msg})")
            continue
        data = value.get("data") if isinstance(value, dict) else None
        page: list[Any] = data if isinstance(data, list) else [value]
        items += [(str(number), item) for item in page]
    return items, problems


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based number, line) of a text, a line ending at LF, CR LF or CR only (JSON strings may hold U+2028)."""
    for number, line in enumerate(io.StringIO(text, newline=None), start=1):
        yield number, line.removesuffix("\n")


def _nanoseconds(value: Any) -> int:
    """An ISO time (with its zone; a naive one is UTC) or a number of nanoseconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    seconds = moment.timestamp() if moment.tzinfo else moment.replace(tzinfo=None).timestamp()
    return round(seconds * 1e9)


def _phoenix_span(item: Mapping[str, Any]) -> Span:
    context = item["context"]
    attributes = flat_attributes(item.get("attributes") or {})
    if item.get("span_kind") and "openinference.span.kind" not in attributes:
        attributes["openinference.span.kind"] = str(item["span_kind"]).upper()
    return Span(
        trace_id=str(context["trace_id"]),
        span_id=str(context["span_id"]),
        parent_id=str(item["parent_id"]) if item.get("parent_id") else None,
        name=str(item["name"]),
        start_ns=_nanoseconds(item["start_time"]),
        end_ns=_nanoseconds(item.get("end_time") or item["start_time"]),
        status=str(item.get("status_code") or "UNSET").upper(),
        status_message=str(item.get("status_message") or ""),
        attributes={key: json_attribute(value) for key, value in attributes.items()},
        events=[
            {
                "name": str(event.get("name", "")),
                "time_ns": _nanoseconds(event["timestamp"]) if event.get("timestamp") else 0,
                "attributes": {k: json_attribute(v) for k, v in flat_attributes(event.get("attributes") or {}).items()},
            }
            for event in item.get("events") or []
            if isinstance(event, dict)
        ],
    )


LANGFUSE_KINDS = {"GENERATION": "LLM", "RETRIEVER": "RETRIEVER", "TOOL": "TOOL", "EMBEDDING": "EMBEDDING"}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _langfuse_span(item: Mapping[str, Any]) -> Span:
    kind = LANGFUSE_KINDS.get(str(item.get("type", "")).upper(), "CHAIN")
    attributes: dict[str, Any] = {"openinference.span.kind": kind}
    metadata = item.get("metadata")
    if isinstance(metadata, dict):
        attributes.update({key: value for key, value in flat_attributes(metadata).items() if key not in attributes})
    given, made = item.get("input"), item.get("output")
    if given is not None:
        attributes["input.value"] = _text(given)
    if made is not None:
        attributes["output.value"] = _text(made)
    if kind == "LLM":
        attributes.update(_langfuse_model(item, given, made))
    elif kind == "RETRIEVER":
        attributes.update(_langfuse_documents(made))
    elif kind == "TOOL":
        attributes["tool.name"] = str(item.get("name", ""))
    start = item["startTime"]
    return Span(
        trace_id=str(item["traceId"]),
        span_id=str(item["id"]),
        parent_id=str(item["parentObservationId"]) if item.get("parentObservationId") else None,
        name=str(item.get("name") or item.get("type") or "observation"),
        start_ns=_nanoseconds(start),
        end_ns=_nanoseconds(item.get("endTime") or start),
        status="ERROR" if item.get("level") == "ERROR" else "UNSET",
        status_message=str(item.get("statusMessage") or ""),
        attributes={key: json_attribute(value) for key, value in attributes.items()},
    )


def _langfuse_model(item: Mapping[str, Any], given: Any, made: Any) -> JsonObject:
    usage = item.get("usageDetails") or item.get("usage") or {}
    out: JsonObject = {"llm.model_name": str(item.get("model") or "unknown")}
    prompt = usage.get("input", item.get("promptTokens")) if isinstance(usage, dict) else item.get("promptTokens")
    completion = usage.get("output", item.get("completionTokens")) if isinstance(usage, dict) else None
    if prompt is not None:
        out["llm.token_count.prompt"] = int(prompt)
    if completion is not None:
        out["llm.token_count.completion"] = int(completion)
    for n, message in enumerate(given if isinstance(given, list) else []):
        if isinstance(message, dict):
            out[f"llm.input_messages.{n}.message.role"] = str(message.get("role", ""))
            out[f"llm.input_messages.{n}.message.content"] = _text(message.get("content", ""))
    reply = made.get("content") if isinstance(made, dict) else made
    if reply is not None:
        out["llm.output_messages.0.message.role"] = "assistant"
        out["llm.output_messages.0.message.content"] = _text(reply)
    return out


def _langfuse_documents(made: Any) -> JsonObject:
    """A retriever observation's output as OpenInference's documents: a list of documents, or an object holding one
    under `documents` (each with `id`, and its text under `text`, `content` or LangChain's `page_content`)."""
    found = made.get("documents") if isinstance(made, dict) else made
    out: JsonObject = {}
    for n, document in enumerate(found if isinstance(found, list) else []):
        if not isinstance(document, dict):
            continue
        text = next((document[key] for key in ("text", "content", "page_content") if key in document), "")
        metadata = document.get("metadata")
        ident = document.get("id", metadata.get("id") if isinstance(metadata, dict) else None)
        if ident is not None:
            out[f"retrieval.documents.{n}.document.id"] = str(ident)
        out[f"retrieval.documents.{n}.document.content"] = _text(text)
        if document.get("score") is not None:
            out[f"retrieval.documents.{n}.document.score"] = float(document["score"])
        if isinstance(metadata, dict):
            out[f"retrieval.documents.{n}.document.metadata"] = json.dumps(metadata, default=str)
    return out


def traces_of(spans: list[Span]) -> Iterator[list[Span]]:
    """The spans by trace, each trace's in the order they started, traces in the order their first span started."""
    by_trace: dict[str, list[Span]] = {}
    for span in sorted(spans, key=lambda s: s.start_ns):
        by_trace.setdefault(span.trace_id, []).append(span)
    yield from by_trace.values()

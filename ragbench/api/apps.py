"""Applications a user already runs, evaluated as systems: the face the `python`, `http` and framework systems are
written against (docs/apps.md, "Writing a system for a framework").

    from ragbench.api.apps import Application, AppReply, AppRequest, Instrumentor, load_object

`Application` (the base: a subclass writes `call(request) -> AppReply`; the base captures the application's spans,
records each answer for `--resume`, and makes the prediction), `AppRequest` (one example as the application is asked
it: `question`, `history`, `images`, `meta`, `extras`, `messages()`, `fields()`; `traceparent` and `otlp_endpoint` for
an application over HTTP), `AppReply` (`answer`, `passages` as `Document`s, `citations`, `raw`, `stream`: a streamed
answer's `Streamed` - its first token's time, chunks and usage; `usage`: a `ReplyUsage`, the model and tokens the
reply reports, priced where the spans carry none, read by `reply_usage`), `reply_from` (a plain
return value - a string, or a mapping with `answer` and `passages` - read into one), `passage_of` (one passage from a
`Document`, a mapping or a string) and `value_summary` (a returned value in a line), `AppReplyError` (an answer ragbench
cannot read: the example fails in one line), `AppTimeout`, `Instrumentor` (an OpenInference instrumentor to activate
while the run runs: its class and the package that brings it), `load_object` (`module:attribute` from the Python path,
refused in one line with the fix), `running` (a system started and stopped around a block, as a run does: tests),
`span_steps` (spans as trace steps), `call_steps` (the trace of one call: the call, then its spans), `span_outline` (a
trace of spans as the viewer's tree), `Span` and `from_readable` (a span the OpenTelemetry SDK ended in this process,
as ragbench reads it: an instrumentor's tests compare their SDK spans with it); trace files (`read_trace_file`: OTLP/JSON, Phoenix or Langfuse exports;
`traces_of`, `example_id_of`, `trace_answer`, `trace_passages`: what `ragbench score --traces` reads of each trace);
and the retry rules of the hosted engines (`backoff`, `retried_status`). What the framework systems share
(ragbench._apps.frameworks): `framework` (the framework's module, or the extra to install), `load_application` (the
application an option names, or what its class or maker makes), `declared_inputs` and `request_value` (an input
mapping of the request's `REQUEST_FIELDS`), `value_at`, `declared_value` and `NothingAtPath` (a declared path in what the
application returned), `answer_text` and `document_of` (its answer and documents read).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragbench.api._lazy import lazy_names

if TYPE_CHECKING:  # type checkers read each name where it is defined; it is imported on first use (below)
    from ragbench._apps.application import Application, AppTimeout, call_steps
    from ragbench._apps.capture import Instrumentor
    from ragbench._apps.conventions import span_outline, span_steps
    from ragbench._apps.exchange import (
        AppReply,
        AppReplyError,
        AppRequest,
        Streamed,
        passage_of,
        reply_from,
        value_summary,
    )
    from ragbench._apps.frameworks import (
        REQUEST_FIELDS,
        NothingAtPath,
        answer_text,
        declared_inputs,
        declared_value,
        document_of,
        framework,
        load_application,
        request_value,
        value_at,
    )
    from ragbench._apps.reply_usage import ReplyUsage, reply_usage
    from ragbench._apps.running import running
    from ragbench._apps.spans import Span, from_readable
    from ragbench._apps.targets import load_object
    from ragbench._apps.trace_files import read_trace_file, traces_of
    from ragbench._apps.trace_reading import example_id_of, trace_answer, trace_passages
    from ragbench._engines.retries import backoff, retried_status

_MODULES = {
    "ragbench._apps.application": ("Application", "AppTimeout", "call_steps"),
    "ragbench._apps.capture": ("Instrumentor",),
    "ragbench._apps.conventions": ("span_steps", "span_outline"),
    "ragbench._apps.trace_reading": ("trace_answer", "trace_passages", "example_id_of"),
    "ragbench._apps.exchange": (
        "AppReply",
        "AppReplyError",
        "AppRequest",
        "Streamed",
        "passage_of",
        "reply_from",
        "value_summary",
    ),
    "ragbench._apps.frameworks": (
        "REQUEST_FIELDS",
        "NothingAtPath",
        "answer_text",
        "declared_inputs",
        "declared_value",
        "document_of",
        "framework",
        "load_application",
        "request_value",
        "value_at",
    ),
    "ragbench._apps.reply_usage": ("ReplyUsage", "reply_usage"),
    "ragbench._apps.running": ("running",),
    "ragbench._apps.spans": ("Span", "from_readable"),
    "ragbench._apps.targets": ("load_object",),
    "ragbench._apps.trace_files": ("read_trace_file", "traces_of"),
    "ragbench._engines.retries": ("backoff", "retried_status"),
}
__all__, __getattr__, __dir__ = lazy_names(__name__, _MODULES)

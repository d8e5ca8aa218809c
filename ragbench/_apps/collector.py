"""The spans of a run's examples, joined to their example by trace id, never by time: each example's call to the
application is the root of a trace of its own (a root span in process, a W3C `traceparent` on an HTTP request), and a
span joins the example whose trace it is in. Concurrent examples are never mixed.

Nothing is dropped silently: a span of a trace no example opened is counted as `unjoined`, one of an example whose
spans were already taken (it ended after the example did: a thread the application left running, an exporter that
sent it late) as `late`, one an export carried with ids of the wrong length as `rejected`, and an export that was no
OTLP at all as a `malformed_export`; `report()` gives the counts, which the system reports with the run's results.

Spans arrive on other threads (the SDK ends a span where the application ends it; the receiver's server has threads
of its own), so the collector locks, and wakes an example's waiter through its event loop.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections import Counter
from collections.abc import Iterable

from .._values.json_values import JsonObject
from .spans import Span

SAMPLES = 3  # unjoined trace ids named in the report, to find their sender by


def new_trace_ids() -> tuple[str, str]:
    """A random trace id and span id (hex), as W3C trace context asks: never all zeros."""
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    if int(trace_id, 16) == 0 or int(span_id, 16) == 0:
        return new_trace_ids()
    return trace_id, span_id


def traceparent(trace_id: str, span_id: str) -> str:
    """The W3C `traceparent` header of a sampled request in trace `trace_id` whose parent is span `span_id`."""
    return f"00-{trace_id}-{span_id}-01"


class ExampleSpans:
    """The spans of one example's trace, `root` the span id the application's own spans hang from (ragbench's root
    span, or the `traceparent`'s parent id): its `entry` is a span whose parent is the root (the application's
    outermost span, which ends last)."""

    def __init__(self, trace_id: str, root: str, loop: asyncio.AbstractEventLoop | None) -> None:
        self.trace_id, self.root = trace_id, root
        self.spans: list[Span] = []
        self._loop = loop
        self._entered = asyncio.Event() if loop is not None else None

    def add(self, span: Span) -> None:
        self.spans.append(span)
        if span.parent_id == self.root and self._entered is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._entered.set)

    async def entered(self, seconds: float) -> bool:
        """Whether the application's outermost span arrived, waiting at most `seconds` for it."""
        if self._entered is None:
            return any(span.parent_id == self.root for span in self.spans)
        try:
            await asyncio.wait_for(self._entered.wait(), seconds)
        except asyncio.TimeoutError:
            return False
        return True


class SpanCollector:
    """The spans of the examples in flight, by trace id (see the module's docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, ExampleSpans] = {}
        self._ended: set[str] = set()  # the traces of examples whose spans were taken
        self.counts: Counter[str] = Counter()
        self._unjoined_traces: list[str] = []

    def open(self, trace_id: str, root: str, awaited: bool = False) -> ExampleSpans:
        """An example's trace, open from now on: its spans join it until `take`. `awaited`: the example waits for its
        outermost span (`ExampleSpans.entered`, spans received over OTLP), which wakes it when it arrives; spans
        ended in process are all in when the call's root span ends, and wake nothing."""
        loop: asyncio.AbstractEventLoop | None = None
        if awaited:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
        example = ExampleSpans(trace_id, root, loop)
        with self._lock:
            self._open[trace_id] = example
        return example

    def take(self, example: ExampleSpans) -> list[Span]:
        """The example's spans, its trace closed: a span of it that arrives later is counted as late."""
        with self._lock:
            self._open.pop(example.trace_id, None)
            self._ended.add(example.trace_id)
            spans = list(example.spans)
        self.counts["joined"] += len(spans)
        return spans

    def claims(self, trace_id: str) -> bool:
        with self._lock:
            return trace_id in self._open or trace_id in self._ended

    def deliver(self, spans: Iterable[Span]) -> None:
        """Spans received or ended, each joined to its example or counted."""
        with self._lock:
            for span in spans:
                example = self._open.get(span.trace_id)
                if example is not None:
                    if span.span_id != example.root:  # ragbench's own root span is not the application's
                        example.add(span)
                elif span.trace_id in self._ended:
                    self.counts["late"] += 1
                else:
                    self.counts["unjoined"] += 1
                    if len(self._unjoined_traces) < SAMPLES and span.trace_id not in self._unjoined_traces:
                        self._unjoined_traces.append(span.trace_id)

    def count(self, what: str, n: int = 1) -> None:
        with self._lock:
            self.counts[what] += n

    def report(self) -> JsonObject:
        """The spans joined to examples, and those that joined none, by why (see the module's docstring)."""
        with self._lock:
            out: JsonObject = {key: self.counts[key] for key in ("joined", "unjoined", "late", "rejected")}
            out["malformed_exports"] = self.counts["malformed_exports"]
            if self._unjoined_traces:
                out["unjoined_traces"] = list(self._unjoined_traces)
            return out

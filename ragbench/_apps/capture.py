"""Spans captured in this process, while an application called in it answers (the `python` system and the
framework systems): the OpenTelemetry SDK's tracer provider with a span processor of ragbench's, the OpenInference
instrumentors a system names activated on it, and a root span a call that its spans join by trace id
(ragbench._apps.collector).

The tracer provider is the process's: OpenTelemetry has one global provider, which an instrumented application may
have set itself (its exporters then see ragbench's root spans and the application's spans as they always do; ragbench's
processor is added beside them). Where none is set, ragbench sets an SDK provider. The processor is added once per
process (`_ROUTER`) and hands each ended span to the run whose example's trace it is in; runs register with it while
they capture (`InProcessCapture`, opened and closed by the system's run: ragbench._apps.application). Where ragbench's
processor is the provider's only one, nothing would see a root span: the root is then its ids alone (no SDK span made,
ended and routed for no one; docs/performance.md, "Your own application").
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, Tracer, TracerProvider
from opentelemetry.sdk.trace.sampling import DEFAULT_ON
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from .._errors import ConfigError
from .._imports import import_target
from .collector import ExampleSpans, SpanCollector
from .spans import from_readable, hex_id

APPS_EXTRA = "pip install 'ragbench[apps]'"


@dataclass(frozen=True)
class Instrumentor:
    """An OpenInference (or OpenTelemetry) instrumentor a system activates while it runs: `target` its class
    (`module:Class`, whose `instrument(tracer_provider=...)` and `uninstrument()` are the instrumentation API's),
    `package` the distribution that brings it, named when it is not installed."""

    target: str
    package: str


class _Router(SpanProcessor):
    """The span processor ragbench adds to the process's tracer provider, once: each ended span goes to the run
    capturing its trace, or is counted as unjoined by every run capturing then (it is nobody's example's)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.collectors: tuple[SpanCollector, ...] = ()  # replaced whole (under the lock), read with none
        self.providers: list[TracerProvider] = []  # those it was added to
        self.own: TracerProvider | None = None  # where the process's provider is no SDK provider: ragbench's own

    def on_end(self, span: ReadableSpan) -> None:
        collectors = self.collectors
        if not collectors or span.context is None:
            return
        if len(collectors) == 1:  # the one run capturing: its span, or one it counts as unjoined (no claim asked)
            collectors[0].deliver([from_readable(span)])
            return
        trace_id = hex_id(span.context.trace_id, 32)
        owner = next((collector for collector in collectors if collector.claims(trace_id)), None)
        for collector in (owner,) if owner is not None else collectors:
            collector.deliver([from_readable(span)])

    def register(self, collector: SpanCollector) -> None:
        with self._lock:
            self.collectors = (*self.collectors, collector)

    def unregister(self, collector: SpanCollector) -> None:
        with self._lock:
            self.collectors = tuple(known for known in self.collectors if known is not collector)


_ROUTER = _Router()
_INSTALL = threading.Lock()


def tracer_provider() -> TracerProvider:
    """The process's SDK tracer provider with ragbench's processor on it: the global one where the application set
    an SDK provider, else one ragbench sets (or, where the process holds a provider of another kind, one of its own)."""
    with _INSTALL:
        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            trace.set_tracer_provider(TracerProvider())
            provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            provider = _ROUTER.own = _ROUTER.own or TracerProvider()
        if not any(provider is known for known in _ROUTER.providers):
            provider.add_span_processor(_ROUTER)
            _ROUTER.providers.append(provider)
        return provider


def activated(instrumentors: Sequence[Instrumentor], provider: TracerProvider, system: str) -> list[Any]:
    """Each instrumentor activated on `provider` (one already active is left as it is, and not deactivated after);
    one that is not installed is a ConfigError naming the package to install."""
    active = []
    for instrumentor in instrumentors:
        try:
            cls = import_target(instrumentor.target)
        except (ImportError, AttributeError):
            raise ConfigError(
                f"system {system} traces the application through {instrumentor.package}, which is not installed: "
                f"pip install {instrumentor.package} (or {APPS_EXTRA})"
            ) from None
        made = cls()
        if getattr(made, "is_instrumented_by_opentelemetry", False):
            continue
        made.instrument(tracer_provider=provider)
        active.append(made)
    return active


_SAMPLED = TraceFlags(TraceFlags.SAMPLED)


def _root_unseen(tracer: Tracer) -> bool:
    """Whether a root span the tracer ended would reach ragbench's processor alone, and sampling it would change
    nothing: the provider's processors are ragbench's only (where the SDK's list of them cannot be read, it is taken
    as seen) and its sampler is the default, which samples a span whose parent is sampled."""
    processors = getattr(tracer.span_processor, "_span_processors", None)
    return tracer.sampler is DEFAULT_ON and isinstance(processors, tuple) and processors == (_ROUTER,)


class InProcessCapture:
    """One run's capture of the spans made in this process: open while the run's examples run (`close` ends it)."""

    def __init__(self, instrumentors: Sequence[Instrumentor] = (), system: str = "") -> None:
        self.collector = SpanCollector()
        self.provider = tracer_provider()
        self._tracer = self.provider.get_tracer("ragbench")
        self._active = activated(instrumentors, self.provider, system)
        _ROUTER.register(self.collector)

    @contextlib.contextmanager
    def example(self, example_id: str, task: str) -> Iterator[ExampleSpans]:
        """The root span of one call of the application, current in the OpenTelemetry context while the block runs
        (a sync call run in a thread takes the context with it: ragbench._apps.calls); the spans of its trace
        join the returned `ExampleSpans` until the collector's `take`.

        Where ragbench's processor is the provider's only one and its sampler the default (every span sampled), no
        one would see the root span ended: it is a span context of ids the provider's generator makes, sampled, and
        not recorded (the application's spans hang from it as from a recorded one, and are sampled as they were).
        Otherwise it is a span of the provider's, which its exporters see with the application's."""
        tracer = self._tracer
        if isinstance(tracer, Tracer) and _root_unseen(tracer):
            ids = tracer.id_generator
            root: trace.Span = NonRecordingSpan(
                SpanContext(ids.generate_trace_id(), ids.generate_span_id(), is_remote=False, trace_flags=_SAMPLED)
            )
        else:
            root = tracer.start_span(
                "ragbench example",
                context=otel_context.Context(),  # a trace of its own, whatever span the caller is in
                attributes={"ragbench.example.id": example_id, "ragbench.task": task},
            )
        span_context = root.get_span_context()
        spans = self.collector.open(hex_id(span_context.trace_id, 32), hex_id(span_context.span_id, 16))
        token = otel_context.attach(trace.set_span_in_context(root))
        try:
            yield spans
        finally:
            otel_context.detach(token)
            root.end()

    def close(self) -> None:
        _ROUTER.unregister(self.collector)
        for made in self._active:
            made.uninstrument()
        self._active = []

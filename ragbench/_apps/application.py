"""`Application`: the base of every system that calls an application a user already runs (`python`, `http`, the
framework systems). A subclass only calls the application (`call`: one `AppRequest` in, one `AppReply` out); the
base makes that call a system's example like any other:

- the call is one step of the example's trace, the root of the application's spans, captured while it answers: in
  process (`traces = "in_process"`: the OpenTelemetry SDK's provider, the subclass's `instrumentors` activated on
  it) or received over OTLP/HTTP (`"otlp"`: a receiver the run starts, whose URL and a W3C `traceparent` the request
  carries), each span read as a model call, search, tool call or step of the application's own
  (ragbench._apps.conventions), joined to its example by trace id;
- a sync `call` runs in a thread of its own, an async one on the loop, measured (with the tasks it starts) for how
  long it holds it (ragbench._apps.calls), both within `timeout` seconds;
- the reply is recorded the moment it returns (calls/app.jsonl), and a `--resume` answers from that record the
  examples it answered (ragbench._apps.replay): the application is never called twice for one example; `--replay` of
  the run answers every example from it, the application never called (an example it holds no answer of fails);
- its passages become the prediction's documents, its answer is post-processed by the task as any system's output,
  its model calls count against --max-cost and are priced by the price table (`SystemRun.charge`);
- an application that raises fails its example (its traceback kept, its spans in the trace), one that answers in
  another shape fails it in one line (ragbench._apps.exchange).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, ClassVar

from .._context import Context
from .._records import SampleRecord
from .._replay.recording import APP_FILE
from .._storage.checkpoint import record_digest
from .._system import RecordedExtras, System, SystemDeclaration, SystemRun, recorded_extras
from .._types import Example, Prediction, Step
from .._values.json_values import JsonObject, JsonValue
from .capture import InProcessCapture, Instrumentor
from .collector import SpanCollector, new_trace_ids, traceparent
from .conventions import span_outline, span_steps
from .exchange import AppReply, AppReplyError, AppRequest
from .receiver import OtlpReceiver
from .replay import RecordedCall, call_line, recorded_calls, span_counts
from .reply_usage import priced_steps
from .spans import Span

TRACES = ("in_process", "otlp", "none")
LOOP_HELD = 0.1  # seconds an async application may hold the event loop at once before it is reported


class AppTimeout(Exception):
    """The application did not answer within the system's `timeout`."""


class NotStarted(RuntimeError):
    """An application system asked to run an example before its run started it."""


class NotRecorded(Exception):
    """`--replay`: the recorded run holds no answer of the application for the example."""


class Application(System):
    """The base of a system that calls an application (see the module's docstring). A subclass sets `name`,
    `traces` and `instrumentors`, takes its options in `__init__` (passing `timeout` on) and writes `call`."""

    declares = SystemDeclaration(
        uses_llm=False,  # the application calls its own models: the run loads no engine
        prompt_style="application",  # the application's own prompts, which ragbench never sees whole
        recorded=RecordedExtras(
            key="app",
            means={"seconds": "seconds", "spans": "spans"},
            counts={"replayed": "replayed", "spans_missing": "spans_missing", "held_the_loop": "held_the_loop"},
        ),
    )
    traces: str = "in_process"  # where its spans come from: "in_process", "otlp" or "none"
    instrumentors: ClassVar[tuple[Instrumentor, ...]] = ()  # activated while the run runs (in process)
    span_wait: float = 10.0  # "otlp": seconds an example waits after the reply for its spans to arrive
    otlp_port: int = 0  # "otlp": the receiver's port on 127.0.0.1 (0: a free one)

    def __init__(self, timeout: float = 300.0) -> None:
        self.timeout = float(timeout)
        self._run: SystemRun | None = None
        self._capture: InProcessCapture | None = None
        self._receiver: OtlpReceiver | None = None
        self._collector: SpanCollector | None = None
        self._recorded: dict[tuple[str, str], RecordedCall] = {}
        self._untime_tasks: Callable[[], None] = lambda: None
        self._read_runs: tuple[object, list[Any]] | None = None  # the samples `report` read, and their extras

    async def call(self, request: AppRequest) -> AppReply:
        """The application's answer to one example. Call a sync API through `await self.in_thread(fn, ...)`."""
        raise NotImplementedError

    def timed_out(self, request: AppRequest) -> str:
        """The line of a call of `request` that did not end within `timeout` (a subclass may say more: how far it
        got, where)."""
        return f"system {self.name}: the application did not answer within {self.timeout:g} s"

    def activated_instrumentors(self) -> tuple[Instrumentor, ...]:
        """The instrumentors activated while the run runs: the class's `instrumentors` (a system whose options
        name others returns those)."""
        return self.instrumentors

    async def in_thread(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`function(*args, **kwargs)` off the event loop, in a thread of its own that carries the example's
        OpenTelemetry context (its spans join the example)."""
        from .calls import in_thread

        return await in_thread(function, *args, **kwargs)

    # the run's lifetime (ragbench._system.StartsForRun)
    async def start(self, run: SystemRun) -> None:
        from .calls import timing_tasks

        self._run = run
        self._untime_tasks = timing_tasks(asyncio.get_running_loop())  # the tasks a call starts are timed too
        if run.replayed is not None:  # `--replay`: every answer from the recorded run, nothing called or captured
            self._recorded, _ = recorded_calls(run.replayed.parent, run.task)
            return
        if run.folder is not None and run.continues:
            self._recorded, _ = recorded_calls(run.folder, run.task)
        if self.traces == "in_process":
            self._capture = InProcessCapture(self.activated_instrumentors(), self.name or type(self).__name__)
            self._collector = self._capture.collector
        elif self.traces == "otlp":
            self._collector = SpanCollector()
            self._receiver = OtlpReceiver(self._collector, self.otlp_port)

    async def stop(self) -> None:
        run, collector = self._run, self._collector
        try:
            if run is not None and run.recorder is not None and collector is not None:
                run.recorder.app_spans({"task": run.task, **collector.report()})
        finally:
            self._untime_tasks()
            if self._capture is not None:
                self._capture.close()
            if self._receiver is not None:
                self._receiver.close()
            self._capture = self._receiver = self._collector = None

    @property
    def otlp_endpoint(self) -> str | None:
        """Where the run receives the application's OTLP traces (`traces = "otlp"`), once started."""
        return self._receiver.endpoint if self._receiver is not None else None

    async def run(self, example: Example, ctx: Context) -> Prediction:
        run = self._run
        if run is None:
            raise NotStarted(
                f"system {self.name}: start it for a run first (a run does; a test: "
                "`async with ragbench.api.apps.running(system, task):`)"
            )
        digest = record_digest(example)
        recorded = self._recorded.get((example.id, digest))
        request = AppRequest.of(example, ctx.task.name)
        extras: JsonObject = {"replayed": False, "spans_missing": False, "held_the_loop": False}
        if recorded is None and run.replayed is not None:
            raise NotRecorded(
                f"system {self.name}: --replay: {run.replayed / APP_FILE} holds no answer of the application for "
                f"example {example.id} of {run.task} (asked after that run ended, or its data changed since)"
            )
        called = recorded is None
        if recorded is None:
            recorded = await self._called(request, ctx, extras)
        extras["replayed"] = not called
        if run.recorder is not None and (called or run.replayed is not None):  # a replay's record replays in turn
            run.recorder.app_call(call_line(run.task, example.id, digest, recorded))
        if run.charge is not None:  # --max-cost: its model calls are counted now
            steps = self._steps(request, recorded)
            ctx.trace.extend(steps)
            run.charge([step for step in steps if step.kind == "llm"])
        else:  # read as steps once the slot has asked its next example (Context.steps_later)
            ctx.steps_later(lambda: self._steps(request, recorded))
        reply = recorded.reply
        answer = ctx.task.prompting.postprocess(reply.answer)
        extras.update({"seconds": round(recorded.seconds, 6), "spans": len(recorded.spans), "raw": reply.raw})
        return Prediction(
            example_id=example.id,
            answer=answer,
            raw_output=reply.answer,
            docs=list(reply.passages),
            citations=reply.citations if reply.citations is not None else ctx.task.prompting.citations(answer),
            extras={"app": extras},
        )

    async def _called(self, request: AppRequest, ctx: Context, extras: JsonObject) -> RecordedCall:
        """The application called for `request`, its spans taken; a call that fails leaves its spans in the trace."""
        collector = self._collector
        started = time.perf_counter()
        spans: list[Span] = []
        root = None
        try:
            if self._capture is not None and collector is not None:
                try:
                    with self._capture.example(request.id, request.task) as example_spans:
                        root = example_spans.root
                        reply = await self._timed(request, extras)
                finally:  # its root span ended: the trace's spans are all in
                    spans = collector.take(example_spans)
            elif collector is not None and self._receiver is not None:
                trace_id, root = new_trace_ids()
                example_spans = collector.open(trace_id, root, awaited=True)
                try:
                    reply = await self._timed(
                        _with_trace(request, traceparent(trace_id, root), self._receiver.endpoint), extras
                    )
                    if not await example_spans.entered(self.span_wait):
                        extras["spans_missing"] = True
                finally:
                    spans = collector.take(example_spans)
            else:
                reply = await self._timed(request, extras)
        except BaseException:
            ctx.trace.extend(
                self._steps(request, RecordedCall(AppReply(""), spans, time.perf_counter() - started), root)
            )
            raise
        return RecordedCall(reply, spans, time.perf_counter() - started)

    async def _timed(self, request: AppRequest, extras: JsonObject) -> AppReply:
        """`call(request)` within `timeout` seconds, measured for how long it holds the event loop at once."""
        from .calls import LoopHolds, Stepped

        holds = LoopHolds()
        stepped = Stepped(self.call(request), holds)
        try:
            reply = await _within(_awaited(stepped), self.timeout)
        except asyncio.TimeoutError:
            raise AppTimeout(self.timed_out(request)) from None
        finally:
            if holds.longest > LOOP_HELD:
                extras["held_the_loop"] = True
                extras["longest_hold_seconds"] = round(holds.longest, 3)
        if not isinstance(reply, AppReply):
            raise AppReplyError(f"system {self.name}: call() returned {type(reply).__name__}, not an AppReply")
        return reply

    def _steps(self, request: AppRequest, recorded: RecordedCall, root: str | None = None) -> list[Step]:
        return call_steps(self.name, request.question, recorded.reply, recorded.spans, recorded.seconds, root)

    # reporting (ragbench._reports.system_hooks)
    def report(self, samples: list[SampleRecord], complete_data: bool) -> JsonObject:
        """The spans that joined no example, and the examples whose spans were missing or that held the event
        loop, as notes beside the results."""
        run = self._run
        counts = span_counts(run.folder, run.task) if run is not None and run.folder is not None else {}
        runs = self._recorded_runs(samples)
        notes = span_notes(counts, self.span_wait)
        missing = sum(1 for each in runs if each.get("spans_missing"))
        if missing:
            notes.append(
                f"{missing} example(s)' spans did not arrive within span_wait={self.span_wait:g} s of the reply: "
                "is the application exporting OTLP to the receiver (docs/apps.md)?"
            )
        held = [each.get("longest_hold_seconds", 0.0) for each in runs if each.get("held_the_loop")]
        if held:
            notes.append(
                f"{len(held)} example(s)' application held the event loop for over {LOOP_HELD:g} s at once "
                f"(longest {max(held):.2f} s), stalling every other example: a blocking call inside async code "
                "(make it async, or give a sync function: it runs in a thread)"
            )
        return {"app_spans": counts, "notes": list(notes)} if counts or notes else {}

    def statistics(self, samples: list[SampleRecord]) -> JsonObject | None:
        """The figures the system declares it records (`declares.recorded`), of the extras `report` read in its
        pass over the same samples (the samples file is not read again for them)."""
        recorded = self.declares.recorded
        if recorded is None or recorded.key != "app":  # a subclass that declares other extras: as it declares
            return None if recorded is None else recorded.statistics(samples)
        runs, self._read_runs = self._recorded_runs(samples), None
        return recorded.statistics_of(runs)

    def _recorded_runs(self, samples: list[SampleRecord]) -> list[Any]:
        """The samples' `app` extras (`recorded_extras`), read once for `report` and `statistics` of one task."""
        read = self._read_runs
        if read is None or read[0] is not samples:
            read = self._read_runs = (samples, recorded_extras(samples, "app"))
        return read[1]

    @classmethod
    def trace_outline(cls, record: SampleRecord) -> list[JsonObject]:
        """The application's spans as a tree for the viewer (ragbench._apps.conventions.span_outline)."""
        return span_outline(list(record.trace))


def call_steps(
    system: str, question: str, reply: AppReply, spans: list[Span], seconds: float, root: str | None = None
) -> list[Step]:
    """The trace of one call of an application: the call (a step of the system's own, the root of the application's
    spans: `root`, else the parent of its outermost spans), then its spans' steps (ragbench._apps.conventions), then
    the reply's usage as a model call where no span's carries tokens (ragbench._apps.reply_usage)."""
    ids = {span.span_id for span in spans}
    if root is None:
        root = next((span.parent_id for span in spans if span.parent_id and span.parent_id not in ids), None)
    response: JsonObject = {"answer": reply.answer, "passages": len(reply.passages)}
    if reply.stream is not None:  # the viewer shows the call's response: how the answer streamed in
        response["stream"] = reply.stream.to_dict()
    call = Step(kind="custom", name="application", request={"system": system, "question": question}, response=response)
    call.seconds = round(seconds, 6)
    call.span = {"id": root, "parent": None, "kind": "application"}
    return [call, *priced_steps(span_steps(spans), reply.usage, root)]


def span_notes(counts: JsonObject, span_wait: float) -> list[JsonValue]:
    """The lines that say what spans joined no example, and why (ragbench._apps.collector's counts)."""
    notes: list[JsonValue] = []
    unjoined, late = counts.get("unjoined", 0), counts.get("late", 0)
    if isinstance(unjoined, int) and unjoined:
        traces = counts.get("unjoined_traces")
        named = f" (traces {', '.join(map(str, traces))})" if isinstance(traces, list) and traces else ""
        notes.append(
            f"{unjoined} span(s) joined no example{named}: spans join their example by its trace (the root span "
            "in process, the request's traceparent over HTTP); a thread or task the application starts outside "
            "that context starts a trace of its own"
        )
    if isinstance(late, int) and late:
        notes.append(
            f"{late} span(s) arrived after their example had ended (span_wait={span_wait:g} s for an application "
            "over HTTP); they are counted here, not in the example's trace"
        )
    rejected, malformed = counts.get("rejected", 0), counts.get("malformed_exports", 0)
    if isinstance(rejected, int) and rejected:
        notes.append(f"{rejected} span(s) with a trace id not of 16 bytes or a span id not of 8 were refused")
    if isinstance(malformed, int) and malformed:
        notes.append(f"{malformed} OTLP export(s) that were not OTLP were refused (answered 400, counted here)")
    return notes


def _with_trace(request: AppRequest, header: str, endpoint: str) -> AppRequest:
    return replace(request, traceparent=header, otlp_endpoint=endpoint)


async def _within(awaitable: Awaitable[Any], seconds: float) -> Any:
    """`awaitable` awaited in this task within `seconds` (asyncio.TimeoutError past them): `asyncio.timeout` where
    Python has it (no task of its own for each call, as `wait_for` makes before Python 3.12)."""
    timeout = getattr(asyncio, "timeout", None)
    if timeout is None:  # Python 3.10
        return await asyncio.wait_for(awaitable, seconds)
    async with timeout(seconds):
        return await awaitable


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    value = await awaitable
    if inspect.isawaitable(value):  # a `call` that returned a coroutine of its own
        value = await value
    return value

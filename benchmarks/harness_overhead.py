"""Harness overhead: examples per second of a full ragbench run with a zero-latency engine.

Runs the real Evaluator (task parsing, vanilla system, scheduler, SQLite response cache, sample
checkpoint, metrics, bootstrap aggregation, results.json) on a synthetic PopQA-format file with
the `scripted:echo` engine, which answers instantly, so everything measured is harness cost:

  cold     first run, empty cache (every call goes to the engine and is written to the cache)
  warm     a rerun with the first run's cache.sqlite (every call is a cache hit), new output dir
  engine   ScriptedEngine.generate alone on the same prompts, batches of 16

"run" is Evaluator.run() as the user sees it; "exec" is the part ragbench itself reports as
cost.wall_seconds (examples through the scheduler, scoring and checkpointing, without loading
the plan, finalising samples and aggregating with the bootstrap).

Run: python benchmarks/harness_overhead.py [--records 5000] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import random
import tempfile
import time
from pathlib import Path

from ragbench._engines.scripted import ScriptedEngine
from ragbench._registry import installed_registry
from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench._values.llm_request import Request
from ragbench._values.sampling import Sampling

WORDS = (
    "the of river city born film album director capital population year wrote sang played "
    "married founded located occupation country genre author team league station county "
    "province mountain language species company university novel series"
).split()
PROPS = (
    "occupation place of birth genre father country producer director capital screenwriter "
    "composer color religion sport author mother capital_of"
).split()


def write_popqa(path: Path, records: int, ctxs: int, seed: int) -> None:
    rng = random.Random(seed)

    def words(lo: int, hi: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))

    with path.open("w", encoding="utf-8") as handle:
        for i in range(records):
            subject = words(1, 3).title()
            record = {
                "question": f"What is {subject}'s {rng.choice(PROPS)}?",
                "answers": [words(1, 3) for _ in range(rng.randint(1, 4))],
                "id": i,
                "prop": rng.choice(PROPS),
                "ctxs": [
                    {
                        "id": str(rng.randrange(21_000_000)),
                        "title": subject,
                        "text": words(80, 120),
                        "score": round(rng.uniform(0.5, 2.0), 4),
                    }
                    for _ in range(ctxs)
                ],
            }
            handle.write(json.dumps(record) + "\n")


def config(data: Path, output: Path, cache: Path | None, bootstrap: int) -> RunConfig:
    return RunConfig.of(
        tasks=["popqa"],
        system="vanilla",
        model="scripted:echo",
        data={"popqa": str(data)},
        output=str(output),
        cache=str(cache) if cache else None,
        progress=False,
        bootstrap_iters=bootstrap,
    )


def timed_run(cfg: RunConfig) -> tuple[float, dict]:
    started = time.perf_counter()
    outcome = Evaluator(cfg, registry=installed_registry()).run()
    seconds = time.perf_counter() - started
    assert outcome.complete, "run incomplete"
    return seconds, outcome.results


def raw_engine(cfg: RunConfig, batch: int) -> tuple[float, float, int]:
    """Seconds to parse + build the prompts, seconds of engine.generate alone, number of prompts."""
    planned = Evaluator(cfg, registry=installed_registry()).planned[0]
    task, system = planned.task, planned.system
    started = time.perf_counter()
    # vanilla on the default `provided` retriever shows the example's first top_n passages
    prompts = [task.prompting.build_prompt(example, example.docs[: system.top_n]) for example in task.examples()]
    prep = time.perf_counter() - started
    sampling = Sampling.make(**system.sampling)
    requests = [Request(prompt=prompt, sampling=sampling) for prompt in prompts]
    engine = ScriptedEngine("echo")
    started = time.perf_counter()
    for start in range(0, len(requests), batch):
        engine.generate(requests[start : start + batch])
    return prep, time.perf_counter() - started, len(requests)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--quick", action="store_true", help="100 records (CI)")
    parser.add_argument("--ctxs", type=int, default=5, help="passages per record")
    parser.add_argument("--bootstrap-iters", type=int, default=1000)
    parser.add_argument("--engine-batch", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--profile", action="store_true", help="also profile one cold run with cProfile and print the top 15 functions"
    )
    parser.add_argument("--keep", action="store_true", help="keep (and print) the temporary directory")
    args = parser.parse_args()
    if args.quick:
        args.records = 100

    tmp_handle = tempfile.TemporaryDirectory(prefix="ragbench-harness-")
    tmp = Path(tmp_handle.name)
    data = tmp / "popqa.jsonl"
    write_popqa(data, args.records, args.ctxs, args.seed)
    print(
        f"{args.records} PopQA-format records, {args.ctxs} ctxs each ({data.stat().st_size / 1e6:.1f} MB), "
        f"system vanilla, model scripted:echo, bootstrap_iters={args.bootstrap_iters}"
    )

    # not reported: imports plugins, metrics and numpy paths once, so "cold" means a cold cache only
    timed_run(config(data, tmp / "warmup", None, args.bootstrap_iters).changed(limit=100))

    cold_s, cold = timed_run(config(data, tmp / "cold", None, args.bootstrap_iters))
    cache_path = tmp / "cold" / "cache.sqlite"
    warm_s, warm = timed_run(config(data, tmp / "warm", cache_path, args.bootstrap_iters))
    assert warm["cost"]["cache_hits"] == args.records and warm["cost"]["llm_calls"] == 0, warm["cost"]
    assert cold["results"] == warm["results"], "warm rerun changed the results"
    prep_s, engine_s, n = raw_engine(config(data, tmp / "unused", None, args.bootstrap_iters), args.engine_batch)
    assert n == args.records

    rows = [
        ("cold cache (Evaluator.run)", cold_s, cold["cost"]["wall_seconds"]),
        ("warm cache (Evaluator.run)", warm_s, warm["cost"]["wall_seconds"]),
        ("parse + build prompts only", prep_s, None),
        (f"engine.generate only (batch {args.engine_batch})", engine_s, None),
    ]
    print()
    print(f"{'what':<34} {'run s':>8} {'ex/s':>10} {'exec s':>8} {'exec ex/s':>10}")
    for name, seconds, exec_s in rows:
        exec_cols = f"{exec_s:8.2f} {n / exec_s:10.0f}" if exec_s else f"{'':8} {'':10}"
        print(f"{name:<34} {seconds:8.2f} {n / seconds:10.0f} {exec_cols}")
    print()
    print(
        f"harness overhead: cold run / engine alone = {cold_s / engine_s:.0f}x, "
        f"warm run / engine alone = {warm_s / engine_s:.0f}x; "
        f"cold run / (parse + prompts + engine) = {cold_s / (prep_s + engine_s):.1f}x; "
        f"warm/cold = {warm_s / cold_s:.2f}"
    )
    print(
        f"per example: cold {1e3 * cold_s / n:.2f} ms, warm {1e3 * warm_s / n:.2f} ms, "
        f"engine {1e6 * engine_s / n:.1f} us; outside exec (plan, finalize, aggregate): "
        f"cold {cold_s - cold['cost']['wall_seconds']:.2f} s, warm {warm_s - warm['cost']['wall_seconds']:.2f} s"
    )

    if args.profile:
        profiler = cProfile.Profile()
        cfg = config(data, tmp / "profiled", None, args.bootstrap_iters)
        profiler.enable()
        Evaluator(cfg, registry=installed_registry()).run()
        profiler.disable()
        for order in ("cumulative", "tottime"):
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(order).print_stats(15)
            text = out.getvalue()
            print(
                f"\ncProfile of one cold run (main thread only; engine batches run in worker threads), "
                f"top 15 by {order}:"
            )
            print(text[text.index("   ncalls") :].rstrip())

    if args.keep:
        print(f"\nkept {tmp}")
        tmp_handle._finalizer.detach()  # type: ignore[attr-defined]
    else:
        tmp_handle.cleanup()


if __name__ == "__main__":
    main()

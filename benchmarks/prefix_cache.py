"""The hf engine's prefix cache on multi-step systems: `ragbench --tasks fictional_multihop --system S --limit N` with
the embedded model (hf:embedded, SmolLM2-135M on the CPU), without the cache (`--model-arg prefix_cache_mb=0`:
batches of padded prompts, each computed whole, decoded by transformers `generate`) and with it (the default), the
two sides of a system each in a fresh process, run in turn or (--together) at the same time, so that a busy
machine's load falls on both alike.

For each run: examples per second over the examples' wall seconds (results.json's cost: model load left out), prompt
tokens sent and those the model computed (cost.engine), peak RSS (the kernel's accounting of the process, os.wait4).
The two sides' generated token ids are compared call by call (each example's LLM steps in order): greedy outputs
must be identical. Goals: >= 2.5x the examples per second, peak RSS <= 2 GB.

Run: python benchmarks/prefix_cache.py [--systems ircot,self_ask] [--limit 5] [--repeats 1] [--together] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from multihop_memory import TASK, measured  # a sibling script: run from the repository root as above

GOAL_RATIO = 2.5
GOAL_PEAK_MB = 2048
# two thoughts of 4 tokens (the second one reuses a prefix), one passage a search
QUICK = ["--system-arg", "max_iter=2", "--system-arg", "max_tokens=4", "--system-arg", "topk=1"]


def one_run(system: str, limit: int, cache: bool, run_dir: Path, env: dict[str, str], options: list[str]) -> dict:
    command = [sys.executable, "-m", "ragbench._cli.main", "--tasks", TASK, "--system", system, *options]
    command += ["--limit", str(limit), "--output", str(run_dir), "--no-progress"]
    command += [] if cache else ["--model-arg", "prefix_cache_mb=0"]
    status, peak, last = measured(command, env)
    if status != 0 or not (run_dir / "results.json").is_file():
        raise SystemExit(f"{system} ({'cache' if cache else 'no cache'}) failed: {last}")
    cost = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))["cost"]
    engine = cost.get("engine") or {}
    return {
        "examples_per_s": cost["examples"] / max(cost["wall_seconds"], 1e-9),
        "seconds": cost["wall_seconds"],
        "calls": cost["llm_calls"],
        "sent": cost["prompt_tokens"],
        "computed": engine.get("prompt_tokens_computed", cost["prompt_tokens"]),
        "peak_mb": peak,
        "tokens": generated_ids(run_dir),
    }


def generated_ids(run_dir: Path) -> dict[str, list[list[int] | None]]:
    """Per example id, the token ids each of its LLM steps generated, in order."""
    out = {}
    for line in (run_dir / "samples" / f"{TASK}.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        steps = [s for s in record.get("trace") or [] if s["kind"] == "llm"]
        out[record["id"]] = [(s.get("response") or {}).get("token_ids") for s in steps]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", default="ircot,self_ask")
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=1, help="runs of each side, in turn; the fastest counts")
    parser.add_argument("--together", action="store_true", help="run the two sides at the same time")
    parser.add_argument(
        "--quick", action="store_true", help=f"ircot on 1 question ({' '.join(QUICK)}), the cache alone"
    )
    args = parser.parse_args()
    systems = ["ircot"] if args.quick else args.systems.split(",")
    options = QUICK if args.quick else []
    limit = 1 if args.quick else args.limit
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{TASK}, {limit} questions, hf:embedded on {os.cpu_count()} CPUs ({platform.machine()}), load {load:.1f}")
    print(
        "| system | calls | no cache ex/s | cache ex/s | ratio | prompt tokens computed / sent | "
        "peak MB no cache / cache | greedy tokens identical |"
    )
    print("|---|---:|---:|---:|---:|---|---|---|")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "RAGBENCH_INDEX_CACHE": os.environ.get("RAGBENCH_INDEX_CACHE", str(Path(tmp) / "idx"))}
        for system in systems:
            runs: dict[bool, list[dict]] = {False: [], True: []}
            for attempt in range(args.repeats):
                sides = (True,) if args.quick else (False, True)
                with ThreadPoolExecutor(len(sides) if args.together else 1) as pool:
                    done = {
                        cache: pool.submit(
                            one_run,
                            system,
                            limit,
                            cache,
                            Path(tmp) / f"{system}-{cache}-{attempt}",
                            {**env, "RAGBENCH_INDEX_CACHE": f"{env['RAGBENCH_INDEX_CACHE']}-{cache}"},  # no wait
                            options,
                        )
                        for cache in sides
                    }
                    for cache, future in done.items():
                        runs[cache].append(future.result())
            new = max(runs[True], key=lambda run: run["examples_per_s"])
            old = max(runs[False] or runs[True], key=lambda run: run["examples_per_s"])  # quick: itself
            same = all(run["tokens"] == old["tokens"] for run in runs[False] + runs[True])
            ratio = new["examples_per_s"] / old["examples_per_s"]
            peak = max(run["peak_mb"] for run in runs[True])
            failed |= not same or peak > GOAL_PEAK_MB or (not args.quick and ratio < GOAL_RATIO)
            print(
                f"| {system} | {new['calls']} | {old['examples_per_s']:.3f} ({old['seconds']:.0f} s) | "
                f"{new['examples_per_s']:.3f} ({new['seconds']:.0f} s) | {ratio:.2f}x | "
                f"{new['computed']:,} / {new['sent']:,} | {max(r['peak_mb'] for r in runs[False] or runs[True]):.0f} / {peak:.0f} | "
                f"{'yes' if same else 'NO'} |" + (" (quick: with the cache alone)" if args.quick else ""),
                flush=True,
            )
    end_load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"load at the end {end_load:.1f}; goals: >= {GOAL_RATIO}x examples/s, peak <= {GOAL_PEAK_MB} MB, identical greedy tokens"
    )
    if failed:
        raise SystemExit("a goal was missed")


if __name__ == "__main__":
    main()

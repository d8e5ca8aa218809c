"""`ragbench compare` at scale: the wall time and peak RSS of comparing two runs of N examples each, in a fresh
process per size (`python -m ragbench._cli.main compare A B`), and the growth of the peak per example.

A real run (aggregation_memory.py's: a YAML task with two slice fields, closed_book, `scripted:echo`, scored by em
and f1) gives the sample lines; each size's two run folders hold that many copies of them, with their own ids, places and digests and
scores drawn at random (em 0/1; f1 the token F1 of answers of 1-7 tokens and golds of 1-4; B answers 5 points
more right), their results.json the template's
with each key's value the mean of its per-example values and their run.json the template's. A few examples
failed in each run (no scores) and B lacks a few of A's examples, as real runs do.

The time of the largest size must stay within `--seconds` and its peak within `--megabytes`: the script exits 1
where it does not (`--quick`, in the test suite, bounds the peak only). `--before CHECKOUT` runs another checkout of ragbench (its folder put first on PYTHONPATH, e.g.
`git archive` of an older commit) on the sizes up to `--before-up-to` first, for a before/after table in one run,
and checks that both print the same comparison.

Run: python benchmarks/compare_scale.py [--sizes 20000,100000,1000000] [--before CHECKOUT] [--before-up-to 20000]
     [--seconds 60] [--megabytes 1024] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from aggregation_memory import RECORDS, template_run  # the real run whose sample lines are copied

FAILED_EVERY = 997  # every so many examples failed in a run (an error, no scores)
MISSING_EVERY = 1009  # every so many examples of A are not in B


def line_parts(template: Path) -> list[list[str]]:
    """Each template sample line cut where its id, index, digest and scores go: text, a field's name, text, ...
    (filled by `write_run`)."""
    marks = {field: f"@{field}@" for field in ("id", "index", "example_sha256", "scores")}
    lines = (template / "samples" / "levels.jsonl").read_text(encoding="utf-8").splitlines()
    cut = re.compile('"@(' + "|".join(marks) + ')@"')
    return [cut.split(json.dumps({**json.loads(line), **marks})) for line in lines]


def write_run(folder: Path, template: Path, parts: list[list[str]], n: int, better: float, seed: int) -> Path:
    """A run folder of `n` examples: template lines with drawn scores, results.json's values their means."""
    rng = np.random.default_rng(seed)
    em = (rng.random(n) < 0.4 + better).astype(float)
    # token F1 of short answers: 2 x tokens shared / (answer tokens + gold tokens), 1 where the answer is right
    answer, gold = rng.integers(1, 8, n), rng.integers(1, 5, n)
    shared = np.minimum(rng.integers(0, 5, n), np.minimum(answer, gold))
    f1 = np.where(em == 1, 1.0, 2 * shared / (answer + gold))
    kept = np.ones(n, dtype=bool)
    (folder / "samples").mkdir(parents=True)
    with (folder / "samples" / "levels.jsonl").open("w", encoding="utf-8") as out:
        for i in range(n):
            if better and i % MISSING_EVERY == 0:
                kept[i] = False
                continue
            failed = (i + seed) % FAILED_EVERY == 0
            scores = '{}, "error": "TimeoutError: the engine did not answer"' if failed else None
            values = {
                "id": f'"q{i}"',
                "index": str(i),
                "example_sha256": f'"{hashlib.sha256(str(i).encode()).hexdigest()}"',
                "scores": scores or f'{{"em": {em[i]}, "f1": {f1[i]}}}',
            }
            pieces = parts[i % RECORDS]
            out.write("".join(values[piece] if k % 2 else piece for k, piece in enumerate(pieces)) + "\n")
            kept[i] = not failed
    results = json.loads((template / "results.json").read_text(encoding="utf-8"))
    for key, values in (("em", em), ("f1", f1)):
        entry = results["details"]["levels"][key]
        entry.update(value=float(np.mean(values[kept])), n=int(kept.sum()))
        results["results"]["levels"][key] = entry["value"]
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    (folder / "run.json").write_text((template / "run.json").read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def measure(pythonpath: str, a: Path, b: Path, folder: Path) -> dict:
    """Seconds, CPU seconds and peak RSS (MB) of `ragbench compare A B` in a fresh process, and the full report it
    printed (`--full`, where the checkout prints a summary by default; an older one prints the report itself)."""
    env = {**os.environ, "PYTHONPATH": pythonpath}
    commands = Path(pythonpath, "ragbench", "_cli", "run_folder_commands.py").read_text()
    full = ["--full"] if '"--full"' in commands else []
    with (folder / "out.txt").open("w+") as out, (folder / "err.txt").open("w+") as err:
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "ragbench._cli.main", "compare", str(a), str(b), *full],
            stdout=out,
            stderr=err,
            env=env,
            cwd=pythonpath,  # `-m` puts the working folder first on sys.path: the checkout's, not the caller's
        )
        _, status, usage = os.wait4(child.pid, 0)  # the child's own peak RSS, not the largest child's so far
        seconds = time.perf_counter() - started
        out.seek(0), err.seek(0)
        if os.waitstatus_to_exitcode(status):
            sys.exit(f"compare failed ({pythonpath}):\n{err.read()[-3000:]}")
        cpu = usage.ru_utime + usage.ru_stime  # what the other jobs on a shared machine do not inflate as much
        return {"seconds": seconds, "cpu": cpu, "peak_mb": usage.ru_maxrss / 1024, "output": out.read()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="20000,100000,1000000")
    parser.add_argument("--before", default=None, metavar="CHECKOUT")
    parser.add_argument("--before-up-to", type=int, default=20000, help="the largest size run --before")
    parser.add_argument("--seconds", type=float, default=60, help="the largest size's bound on wall time")
    parser.add_argument("--megabytes", type=float, default=1024, help="the largest size's bound on peak RSS")
    parser.add_argument("--quick", action="store_true", help="200 and 1,000 examples, no bound on time")
    args = parser.parse_args()
    sizes = [200, 1000] if args.quick else [int(s) for s in args.sizes.split(",")]
    seconds = math.inf if args.quick else args.seconds
    here = str(Path(__file__).resolve().parent.parent)
    with tempfile.TemporaryDirectory(prefix="ragbench-compare-") as tmp:
        template_run(Path(tmp))
        template = Path(tmp) / "template"
        parts = line_parts(template)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; 2,000 paired bootstrap rounds")
        print("| ragbench | examples a run | samples files (MB) | seconds | CPU seconds | peak RSS (MB) | load |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        last: dict = {}
        for n in sizes:
            a = write_run(Path(tmp) / f"a_{n}", template, parts, n, 0.0, seed=1)
            b = write_run(Path(tmp) / f"b_{n}", template, parts, n, 0.05, seed=2)
            size = sum((run / "samples" / "levels.jsonl").stat().st_size for run in (a, b))
            runs = [("before", args.before)] if args.before and n <= args.before_up_to else []
            outputs = []
            for label, checkout in [*runs, ("this", here)]:
                last = measure(str(checkout), a, b, Path(tmp))
                outputs.append(last["output"])
                print(
                    f"| {label} | {n:,} | {size / 1e6:,.0f} | {last['seconds']:.1f} | {last['cpu']:.1f} | "
                    f"{last['peak_mb']:,.0f} | {os.getloadavg()[0]:.1f} |"
                )
            if len(set(outputs)) > 1:
                sys.exit(f"{n:,} examples: the two checkouts print different comparisons")
            for run in (a, b):
                (run / "samples" / "levels.jsonl").unlink()
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    if last["seconds"] > seconds or last["peak_mb"] > args.megabytes:
        sys.exit(
            f"{sizes[-1]:,} examples: {last['seconds']:.1f} s and {last['peak_mb']:,.0f} MB, over the bounds of "
            f"{seconds:.0f} s and {args.megabytes:,.0f} MB"
        )


if __name__ == "__main__":
    main()

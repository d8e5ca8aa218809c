"""Memory of a run's end: the peak RSS of assembling results.json from a run folder's samples file (samples
rewritten in data order, values, bootstrap intervals, slices, the official headline, failures, the system's
hooks) at several numbers of examples, each in a fresh process, and the growth of the peak per example.

A real run (a YAML task with two slice fields, closed_book, `scripted:echo`, several LLM steps a sample) gives
the sample lines; each size's samples file holds that many copies of them, with their own ids, places and
digests, written out of data order (as a run with examples in flight writes them). The child process plans
the run and calls `run_results` on the folder: what it holds beyond its start is what the assembly holds.

The growth per example (between the two largest sizes) must stay within `--bound` bytes (the numeric
arrays: a value and a place per metric key, a code per slice field, a position and an offset per record):
the script exits 1 where it does not (`--quick` does not check it). Both sizes must be past CHUNK_DRAWS /
iterations examples, where the bootstrap's chunk of resamples (16 MB) stops growing with n. `--before PYTHON`
measures another checkout's interpreter first (a virtualenv of an older ragbench), for a before/after table in
one run.

Run: python benchmarks/aggregation_memory.py [--sizes 1000,10000,100000] [--iters 1000] [--before PYTHON]
     [--bound 400] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

RECORDS = 24  # the real run's examples, copied into every size's samples file
STEPS = 4  # LLM steps a sample (a multi-step system's trace)
TASK = (
    "task: levels\ndata: {path: levels.jsonl, format: flashrag}\n"
    "fields:\n  slices: {level: metadata.level, kind: metadata.kind}\n"
    "prompt:\n  template: '{{ question }}'\nmetrics: [em, f1]\n"
)

CHILD = r"""
import json, resource, sys, time
from ragbench._run.assemble import ResultsSettings, run_results
from ragbench._run.plan.planning import plan
from ragbench._run.plan.planning import run_registry
from ragbench._storage.rundir import RunDir
from ragbench._config.run_config import RunConfig

folder, task, iterations = sys.argv[1], sys.argv[2], int(sys.argv[3])
config = RunConfig.of(tasks=[task], system="closed_book", model="scripted:echo", output=folder, progress=False,
                   bootstrap_iters=iterations)
planned = plan(config.what, config.judging, run_registry(config.what))  # the task file registered first
start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
results = run_results(planned, RunDir(folder), ResultsSettings.of(config, {}), checkpoints={}, cost=dict, full_config={},
                      versions={"ragbench": "benchmark"})
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"start_kb": start, "peak_kb": peak, "seconds": seconds,
                  "records": results.counts["levels"]["records"]}))
"""


def template_run(folder: Path) -> tuple[Path, list[dict]]:
    """The YAML task's file and the sample records of a real run of it, each with STEPS LLM steps."""
    from ragbench._registry import installed_registry
    from ragbench._run.evaluator import Evaluator, RunConfig
    from ragbench._run.plan.planning import run_registry

    records = [
        {
            "id": f"q{i}",
            "question": f"Question {i} about the river and its city?",
            "golden_answers": ["yes"],
            "metadata": {"level": i % 5, "kind": "abc"[i % 3]},
        }
        for i in range(RECORDS)
    ]
    (folder / "levels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    task = folder / "levels.yaml"
    task.write_text(TASK, encoding="utf-8")
    config = RunConfig.of(
        tasks=[str(task)],
        system="closed_book",
        model="scripted:echo",
        output=str(folder / "template"),
        progress=False,
        bootstrap_iters=10,
    )
    Evaluator(config, run_registry(config.what, installed_registry())).run()
    lines = (folder / "template" / "samples" / "levels.jsonl").read_text(encoding="utf-8").splitlines()
    samples = [json.loads(line) for line in lines]
    for sample in samples:
        sample["trace"] = sample["trace"] * STEPS
    return task, samples


def samples_folder(folder: Path, template: list[dict], n: int) -> Path:
    """A run folder whose samples file holds `n` copies of the template's samples, pairs swapped (out of order)."""
    run = folder / f"run_{n}"
    (run / "samples").mkdir(parents=True, exist_ok=True)
    with (run / "samples" / "levels.jsonl").open("w", encoding="utf-8") as out:
        for i in range(n):
            place = i ^ 1 if (i ^ 1) < n else i
            sample = template[place % len(template)]
            digest = hashlib.sha256(str(place).encode()).hexdigest()
            out.write(json.dumps({**sample, "index": place, "id": f"q{place}", "example_sha256": digest}) + "\n")
    return run


def measure(python: str, folder: Path, task: Path, iterations: int, here: bool = False) -> dict[str, float]:
    """The assembly's figures from a fresh process of `python`, or (`here`: the quick mode, whose peak is this
    process's and not a figure) from this process."""
    command = [python, "-c", CHILD, str(folder), str(task), str(iterations)]
    if here:
        sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))  # a folder, not a package
        from command_here import python_here

        return json.loads(python_here(command, dict(os.environ))[1].strip().splitlines()[-1])
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{python}: the assembly failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--iters", type=int, default=1000)
    parser.add_argument("--before", default=None, metavar="PYTHON")
    parser.add_argument("--bound", type=float, default=400, help="bytes a example the peak may grow by (this checkout)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="1,000 and 2,000 examples, 200 iterations, the bound not checked (at these sizes the bootstrap's chunk "
        "still grows with n), this ragbench's assembly in this process (its peak not a figure)",
    )
    args = parser.parse_args()
    sizes = [1000, 2000] if args.quick else [int(s) for s in args.sizes.split(",")]
    iterations = 200 if args.quick else args.iters
    pythons = ([("before", args.before)] if args.before else []) + [("this", sys.executable)]
    with tempfile.TemporaryDirectory(prefix="ragbench-assembly-") as tmp:
        task, template = template_run(Path(tmp))
        print(f"{STEPS} LLM steps a sample, 2 metric keys, 2 slice fields, {iterations} bootstrap rounds")
        print("| ragbench | examples | samples file (MB) | peak RSS (MB) | growth in assembly (MB) | seconds |")
        print("|---|---:|---:|---:|---:|---:|")
        growth: dict[str, float] = {}
        for label, python in pythons:
            peaks = []
            for n in sizes:
                folder = samples_folder(Path(tmp), template, n)
                size = (folder / "samples" / "levels.jsonl").stat().st_size
                m = measure(python, folder, task, iterations, args.quick and label == "this")
                assert m["records"] == n, m
                peaks.append(m["peak_kb"] * 1024)
                print(
                    f"| {label} | {n:,} | {size / 1e6:.0f} | {m['peak_kb'] / 1024:.0f} | "
                    f"{(m['peak_kb'] - m['start_kb']) / 1024:.0f} | {m['seconds']:.2f} |"
                )
            growth[label] = (peaks[-1] - peaks[-2]) / (sizes[-1] - sizes[-2])
        for label, per_example in growth.items():
            print(f"{label}: the peak grows {per_example:,.0f} bytes a example ({sizes[-2]:,} -> {sizes[-1]:,})")
    if not args.quick and growth["this"] > args.bound:
        sys.exit(f"the peak grows {growth['this']:,.0f} bytes a example, over the bound of {args.bound:,.0f}")


if __name__ == "__main__":
    main()

"""Memory of a run's end: the peak RSS of aggregating a task's samples (values, bootstrap intervals,
slices) at several numbers of examples, each in a fresh process.

The samples are built first (what any aggregation holds: their memory grows with n); the figure that
matters is the growth of the peak while `task_scores` runs, which must not grow with n x iterations
(the bootstrap draws its resamples in chunks of bounded size).

`--before PYTHON` runs the same with another ragbench's interpreter first (e.g. a virtualenv of an
older checkout), for a before/after comparison in one run.

Run: python benchmarks/aggregation_memory.py [--sizes 1000,20000,100000] [--iters 1000] [--before PYTHON] [--quick]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys
from ragbench._metric import Metric
from ragbench._reports.results import task_scores

class TwoKeys(Metric):
    name, keys = "m", ("match", "f1")

n, iterations = int(sys.argv[1]), int(sys.argv[2])
samples = [{"id": str(i), "index": i, "example_sha256": f"{i:064x}", "meta": {"kind": ("a", "b", "c")[i % 3]},
            "scores": {"match": float(i % 2), "f1": (i % 7) / 7}} for i in range(n)]
held = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
task_scores(samples, [TwoKeys()], ("kind",), n, iterations, 0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"held_mb": held / 1024, "peak_mb": peak / 1024}))
"""


def measure(python: str, n: int, iterations: int) -> dict[str, float]:
    done = subprocess.run([python, "-c", CHILD, str(n), str(iterations)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,20000,100000")
    parser.add_argument("--iters", type=int, default=1000)
    parser.add_argument("--before", default=None, metavar="PYTHON")
    parser.add_argument("--quick", action="store_true", help="1000 and 5000 examples, 200 iterations")
    args = parser.parse_args()
    sizes = [1000, 5000] if args.quick else [int(s) for s in args.sizes.split(",")]
    iterations = 200 if args.quick else args.iters
    pythons = ([("before", args.before)] if args.before else []) + [("this", sys.executable)]
    print(f"| ragbench | examples | iterations | samples held (MB) | peak RSS (MB) | growth in aggregation (MB) |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, python in pythons:
        for n in sizes:
            m = measure(python, n, iterations)
            print(f"| {label} | {n} | {iterations} | {m['held_mb']:.0f} | {m['peak_mb']:.0f} | "
                  f"{m['peak_mb'] - m['held_mb']:.0f} |")


if __name__ == "__main__":
    main()

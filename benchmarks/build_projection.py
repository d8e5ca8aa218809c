"""MS MARCO v2.1 segmented's `lucene_bm25` build (113,520,750 passages) on 8, 32 and 128 nodes of 16 cores,
projected from build_throughput.py's measured figures (`--figures`, default the latest run's,
benchmarks/figures/build_throughput-chunk-split-ray.json): computed, not typed, each input printed with where it
came from. Each CPU figure is fitted over the measured sizes as a fixed part (the processes' and Ray's start, added
once) and a part a passage (one size alone: all of it a passage, which errs high); each peak memory the same way.
The builds:

- one index (`index build --ray`, no `--shards`): the driver reads every passage, merges every block and writes the
  one index; the workers analyse. Time = the driver's CPU, serial on the head, + the workers' CPU / (nodes x
  cores). Head memory: the driver's peak. A node: `cores` workers at their measured peak.
- shards (`index build --ray --shards S`, S = nodes x cores: each task builds its own shard from its own part of
  the corpus; only per-term statistics travel). Where the figures have a `--ray ..., --shards W` row: time = its
  driver's CPU (serial) + its tasks' CPU, all three steps, / (nodes x cores) + the driver's check of ids across
  shards (`repeated_ids.shared_hashes`: every shard's sorted id hashes compared range by range of the hash space,
  one sort of every hash, at the CPU ns a hash measured here, serial; the figures' driver ran the check before it,
  every pair of shards' hashes intersected, whose cost at W shards, measured here too, is taken off its CPU a
  passage, the rest scaled by the length factor as every CPU figure); a process: a
  task's peak, fitted over the passages of its part, + the whole vocabulary (a last-step task holds it, docs/
  scale-out.md's "Limits"); the head: its driver's peak. Without such a row, from the
  one-process build of a part (its CPU a passage over the cores; a process its peak at passages / (nodes x cores))
  with the whole id check. Plus the statistics' merge
  of `--vocabulary` terms (assumed: MS MARCO v2.1's term count is not measured here; the measured corpus has 5,000),
  each part's vocabulary taken as the whole one (an upper bound), at the bytes a term and the CPU ns an update of
  a Python dict of str -> int measured here (as a process that holds terms in Python holds them; the one index's
  driver holds them all too), either by term across the nodes (the build's middle step: each node merges its
  1/nodes of the terms from every node, terms updates a node, in parallel; the head holds none) or, for comparison,
  on the head (not built: each node's cores merged on the node first, then nodes x terms updates on the head, which
  holds every term).

A passage of MS MARCO v2.1 segmented is taken to cost `--length-factor` times a synthetic one's CPU and
`--memory-factor` times its memory (2 and 2 by default: its segments are about twice the synthetic 60 words, as
docs/scale-out.md estimates; not measured). The per-core goal (Anserini's 3,500-4,000 passages/s a thread on MS
MARCO v2 passages, anserini PR #1611) is judged on the same corpus: ragbench's CPU rate against pyserini's (Lucene's)
a thread, which on those passages is Anserini's.

    python benchmarks/build_projection.py [--figures FILE] [--vocabulary 30000000] [--length-factor 2]
    python benchmarks/build_projection.py --quick     # the same, a dict's bytes a term measured on 20,000 terms
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragbench._retrieval.sharding.build.repeated_ids import HASH_END, shared_hashes

MSMARCO = 113_520_750
NODES = (8, 32, 128)
FIGURES = Path(__file__).with_name("figures") / "build_throughput-chunk-split-ray.json"
GOALS = {"minutes_32": 15, "process_gb": 8, "head_gb": 2}
BY_TERM = "shards (`--ray --shards`), statistics merged by term across the nodes"  # the build of today
ANSERINI_PER_THREAD = 3500  # passages/s a thread: MS MARCO v2 passage, 18 threads (anserini PR #1611; the issue)
GB = 1e9


def dict_term_cost(terms: int = 200_000) -> tuple[float, float]:
    """(bytes a term, CPU seconds a term-update) of a Python dict of str -> int document frequencies."""
    tracemalloc.start()
    frequencies = {f"term{n:09d}": n for n in range(terms)}
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    times = []
    for _ in range(5):  # the least (as timeit: other work only adds time)
        started = time.process_time()
        for term in frequencies:
            frequencies[term] += 1
        times.append(time.process_time() - started)
    return size / terms, min(times) / terms


def id_check_costs(passages: int = 200_000) -> tuple[float, float]:
    """CPU seconds a hash of the check of ids across shards, as the figures' code made it (every pair of shards'
    sorted 8-byte hashes intersected by `np.intersect1d`: an element of a pair) and as the build makes it now
    (`shared_hashes` over 16 shards' hashes: a hash), the least of 5 runs each."""
    rng = np.random.default_rng(0)
    shards = [np.sort(rng.integers(0, HASH_END, size=passages // 16, dtype=np.int64)) for _ in range(16)]
    pairwise, ranged = [], []
    for _ in range(5):
        started = time.process_time()
        np.intersect1d(shards[0], shards[1])
        pairwise.append(time.process_time() - started)
        started = time.process_time()
        shared_hashes(shards)
        ranged.append(time.process_time() - started)
    return min(pairwise) / (2 * len(shards[0])), min(ranged) / passages


def fitted(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(fixed, a unit) of y over x through `points` (least squares); one point: all of it a unit (errs high); a
    slope below 0 (y did not grow with x): the largest y, fixed."""
    if len(points) < 2:
        return 0.0, points[0][1] / points[0][0]
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)
    if slope < 0:
        return max(y for _, y in points), 0.0
    return mean_y - slope * mean_x, slope


def memory_line(sizes: dict[str, Any], label: str) -> tuple[float, float]:
    """(fixed bytes, bytes a passage) of `label`'s peak memory through the measured sizes."""
    return fitted([(int(p), row[label]["peak_mb"] * (1 << 20)) for p, row in sizes.items() if label in row])


def cpu_line(sizes: dict[str, Any], label: str, workers: bool = False) -> tuple[float, float]:
    """(fixed CPU s, CPU s a passage) of `label`'s driver (or, `workers`, of its workers together)."""
    points = [
        (int(p), sum(w["cpu_s"] for w in row[label]["workers"]) if workers else row[label]["cpu_s"])
        for p, row in sizes.items()
        if label in row
    ]
    return fitted(points)


def task_line(sizes: dict[str, Any], label: str) -> tuple[float, float]:
    """(fixed bytes, bytes a passage of its part) of a `--shards W` build's task's peak memory over the sizes."""
    shards = int(label.rsplit(maxsplit=1)[1])
    return fitted([(int(p) / shards, r[label]["worker_peak_mb"] * (1 << 20)) for p, r in sizes.items() if label in r])


def ray_label(row: dict[str, Any], shards: bool) -> str | None:
    """The row's `--ray` build of the most workers, with `--shards` or without."""
    labels = [k for k in row if k.startswith("--ray") and ("--shards" in k) == shards]
    return max(labels, key=lambda k: int(k.split()[1]), default=None)


def rates(found: dict[str, Any]) -> dict[str, Any]:
    """Each part's CPU (fixed s, us a passage) and peak memory (fixed B, B a passage) fitted over the sizes, and the
    per-core rates of the largest measured size that has a --ray row without --shards."""
    sizes = found["sizes"]
    passages = max((int(p) for p, row in sizes.items() if ray_label(row, False)), default=None)
    if passages is None:
        raise SystemExit("build_projection: no --ray figures without --shards: run build_throughput.py with --workers")
    row = sizes[str(passages)]
    label = ray_label(row, False)
    assert label is not None
    got = {
        "passages": passages,
        "ray_label": label,
        "one_cpu": cpu_line(sizes, "one process"),
        "driver_cpu": cpu_line(sizes, label),
        "worker_cpu": cpu_line(sizes, label, workers=True),
        "worker_mb": max(sizes[p][label]["worker_peak_mb"] for p in sizes if label in sizes[p]),
        "load": row[label]["load"],
        "driver_line": memory_line(sizes, label),
        "one_line": memory_line(sizes, "one process"),
    }
    shard_sizes = [p for p, r in sizes.items() if ray_label(r, True)]
    if shard_sizes:
        shard_label = ray_label(sizes[max(shard_sizes, key=int)], True)
        assert shard_label is not None
        shards = int(shard_label.rsplit(maxsplit=1)[1])
        got["shard_label"], got["shard_sizes"], got["shards"] = shard_label, sorted(int(p) for p in shard_sizes), shards
        got["shard_driver_cpu"] = cpu_line(sizes, shard_label)
        got["shard_task_cpu"] = cpu_line(sizes, shard_label, workers=True)
        got["shard_driver_line"] = memory_line(sizes, shard_label)
        got["shard_task_line"] = task_line(sizes, shard_label)
    pyserini = row.get("pyserini, 1 threads")
    if pyserini:
        got["pyserini_rate"] = passages / (pyserini["wall_s"] - row.get("pyserini startup_s", 0.0))
        got["pyserini_cpu_rate"] = passages / (pyserini["cpu_s"] - row.get("pyserini startup_cpu_s", 0.0))
    got["one_rate"] = passages / row["one process"]["wall_s"]
    got["one_cpu_rate"] = passages / row["one process"]["cpu_s"]
    return got


def this_machine(found: dict[str, Any], hours: float = 1.0) -> list[str]:
    """The largest corpus each build can take here: what fits the machine's memory (less 2 GiB for the system)
    by its fitted peak-memory line, and what its measured wall rate (the largest size's) builds in `hours`."""
    sizes = found["sizes"]
    largest = max(sizes, key=int)
    room = (found["machine"]["memory_gib"] - 2) * 2**30
    lines = [f"this machine ({found['machine']['memory_gib']} GiB): the largest corpus a build takes", ""]
    lines += ["| build | fits in memory | built in 1 h at the measured rate |", "|---|---:|---:|"]
    for label, figures in sizes[largest].items():
        if not isinstance(figures, dict):
            continue
        fixed, each = memory_line(sizes, label)
        if "--shards" in label:  # its W tasks at once, each at its peak over its part: W x fixed + a passage each
            tasks = int(label.rsplit(maxsplit=1)[1])
            task_fixed, task_each = task_line(sizes, label)
            fixed, each = fixed + tasks * task_fixed, each + task_each
        fits = f"{(room - fixed) / each:,.0f} passages" if each > 0 else "no limit measured"
        if label.startswith("pyserini"):  # Lucene writes a segment each time its RAM buffer fills
            fits = "not bounded by memory (segments flushed)"
        wall = figures["wall_s"] - sizes[largest].get("pyserini startup_s", 0.0) * label.startswith("pyserini")
        lines.append(f"| {label} | {fits} | {int(largest) / wall * 3600 * hours:,.0f} passages |")
    return lines


def per_core_line(r: dict[str, Any]) -> str:
    """The per-core goal, judged on the same corpus: ragbench's CPU rate against pyserini's (Lucene's) a thread,
    whose per-thread rate on MS MARCO v2 passages is Anserini's ~3,500-4,000."""
    line = f"per core: ragbench {r['one_cpu_rate']:,.0f} passages/CPU s on the synthetic corpus"
    if "pyserini_cpu_rate" not in r:
        return line + "; no pyserini figure: the goal not judged"
    ratio = r["one_cpu_rate"] / r["pyserini_cpu_rate"]
    return (
        f"{line}, pyserini {r['pyserini_cpu_rate']:,.0f} a thread: ragbench {ratio:.2f}x Lucene, so ~"
        f"{ratio * ANSERINI_PER_THREAD:,.0f} passages/s a core where Anserini does {ANSERINI_PER_THREAD:,}-4,000 a "
        f"thread: {'met' if ratio >= 1 else 'not met'}"
    )


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def cpu_text(line: tuple[float, float]) -> str:
    return f"{line[1] * 1e6:.1f} CPU us a passage + {line[0]:.1f} s"


def memory_text(line: tuple[float, float]) -> str:
    return f"{line[0] / 2**20:.0f} MB + {line[1]:.0f} B a passage"


def inputs(r: dict[str, Any], found: dict[str, Any], length: float, memory: float) -> list[str]:
    """The projection's inputs as measured (fitted over the sizes) and as assumed, one line each."""
    sizes = ", ".join(f"{int(p):,}" for p in sorted(found["sizes"], key=int))
    lines = [
        f"inputs: {sizes} passages measured on {found['machine']} (load {r['load']} at {r['passages']:,}); CPU and "
        "peak memory fitted over the sizes as fixed + a passage:",
        f"  one process: {cpu_text(r['one_cpu'])} ({r['one_cpu_rate']:,.0f} passages/CPU s and {r['one_rate']:,.0f}"
        f" passages/s wall at {r['passages']:,}); peak {memory_text(r['one_line'])}",
        f"  {r['ray_label']}: driver {cpu_text(r['driver_cpu'])} (serial), workers together "
        f"{cpu_text(r['worker_cpu'])}; driver's peak {memory_text(r['driver_line'])}, a worker's "
        f"{r['worker_mb']:.0f} MB",
    ]
    if "shard_label" in r:
        lines.append(
            f"  {r['shard_label']} (shard-parallel, measured at {', '.join(f'{p:,}' for p in r['shard_sizes'])}): "
            f"driver {cpu_text(r['shard_driver_cpu'])} (serial), tasks together {cpu_text(r['shard_task_cpu'])};"
            f" driver's peak {memory_text(r['shard_driver_line'])}, a task's {memory_text(r['shard_task_line'])}"
            " of its part: the shards' rows"
        )
    else:
        lines.append("  no --shards row: the shards' rows from the one-process build of a part")
    if "pyserini_rate" in r:
        lines.append(
            f"  pyserini, 1 thread: {r['pyserini_rate']:,.0f} passages/s wall, {r['pyserini_cpu_rate']:,.0f} "
            "passages/CPU s (its JVM's start taken off)"
        )
    return lines + [
        f"  a passage of MS MARCO v2.1 segmented: CPU x{length} the synthetic one's, memory x{memory} (assumed)"
    ]


QUICK_TERMS = 20_000  # --quick's dict: the script runs


def projection_report(
    found: dict[str, Any],
    cores: int = 16,
    vocabulary: int = 30_000_000,
    length: float = 2.0,
    memory: float = 2.0,
    terms: int = 200_000,
) -> str:
    r = rates(found)
    term_bytes, term_s = dict_term_cost(terms)
    pair_s, id_s = id_check_costs()

    def cpu(line: tuple[float, float], over: int = 1) -> float:  # seconds: the fixed part once, the rest spread
        return line[0] + line[1] * length * MSMARCO / over

    def mem(line: tuple[float, float], passages: float) -> float:
        return line[0] + line[1] * memory * passages

    lines = inputs(r, found, length, memory) + [
        f"  statistics: a Python dict of str -> int holds {term_bytes:.0f} B a term, an update takes "
        f"{term_s * 1e9:.0f} CPU ns (measured here); {vocabulary:,} terms (assumed), each part's vocabulary taken as"
        " whole (an upper bound)",
        f"  ids across shards: every shard's sorted id hashes compared range by range on the head, {id_s * 1e9:.0f}"
        " CPU ns a hash (measured here), serial, whatever the shards; the figures' driver intersected every pair of"
        f" shards' hashes, {pair_s * 1e9:.0f} CPU ns an element of a pair: (W - 1) x passages taken off its CPU",
        "",
        f"| build of {MSMARCO:,} passages | nodes x {cores} cores | build time | memory a node | largest process "
        "| head's memory |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    verdict: dict[str, list[bool]] = {}
    unchecked = 0.0
    for nodes in NODES:
        shards = nodes * cores
        rows = {
            "one index (`--ray`: the driver merges every block)": (
                cpu(r["driver_cpu"]) + cpu(r["worker_cpu"], shards), 0.0, 0.0, cores * r["worker_mb"] * 2**20,
                mem(r["driver_line"], MSMARCO) + vocabulary * term_bytes,
            )
        }  # fmt: skip
        if "shard_label" in r:  # the driver's CPU less its own shards' id check (counted below, at `shards`)
            fixed, each = r["shard_driver_cpu"]
            analyse = cpu((fixed, max(0.0, each - (r["shards"] - 1) * pair_s))) + cpu(r["shard_task_cpu"], shards)
            process, head = mem(r["shard_task_line"], MSMARCO / shards), mem(r["shard_driver_line"], MSMARCO)
        else:
            analyse, process, head = cpu(r["one_cpu"], shards), mem(r["one_line"], MSMARCO / shards), 0.0
        check = MSMARCO * id_s
        process += vocabulary * term_bytes  # a last-step task holds the whole vocabulary
        rows[BY_TERM] = (analyse + check + vocabulary * term_s, vocabulary * term_s, check, cores * process, head)
        rows["shards, statistics merged on the head instead (not built)"] = (
            analyse + check + nodes * vocabulary * term_s, nodes * vocabulary * term_s, check, cores * process,
            head + vocabulary * term_bytes,
        )  # fmt: skip
        if nodes == 32:
            unchecked = rows[BY_TERM][0] - rows[BY_TERM][2]
        for build, (seconds, merge, check, node, head) in rows.items():
            biggest = max(head, node / cores)
            parts = [f"merge {duration(merge)}"] * bool(merge) + [f"id check {duration(check)}"] * bool(check)
            merged = f" ({', '.join(parts)})" if parts else ""
            lines.append(
                f"| {build} | {nodes} | {duration(seconds)}{merged} | {node / GB:.1f} GB | {biggest / GB:.1f} GB "
                f"| {head / GB:.1f} GB |"
            )
            verdict.setdefault(build, [])
            verdict[build] += [nodes != 32 or seconds <= GOALS["minutes_32"] * 60]
            verdict[build] += [biggest <= GOALS["process_gb"] * GB, head <= GOALS["head_gb"] * GB]
    lines += ["", f"{BY_TERM} on 32 nodes less the id check: {duration(unchecked)}", per_core_line(r)]
    names = ("<= 15 min on 32 nodes", "no process over 8 GB", "head under 2 GB")
    for build, checks in verdict.items():
        met = [all(checks[i::3]) for i in range(3)]
        lines.append(f"goals, {build}: " + "; ".join(f"{n}: {'met' if m else 'not met'}" for n, m in zip(names, met)))
    return "\n".join(lines + ["", *this_machine(found)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figures", type=Path, default=FIGURES, help="build_throughput.py --json-out's figures")
    parser.add_argument("--cores", type=int, default=16, help="cores a node")
    parser.add_argument("--vocabulary", type=int, default=30_000_000, help="terms of the corpus (assumed)")
    parser.add_argument("--length-factor", type=float, default=2.0, help="a real passage's CPU, synthetic's x")
    parser.add_argument("--memory-factor", type=float, default=2.0, help="a real passage's memory, synthetic's x")
    parser.add_argument("--quick", action="store_true", help="the same, a dict of 20,000 terms measured")
    args = parser.parse_args()
    try:
        found = json.loads(args.figures.read_text())
    except (OSError, ValueError) as exc:
        sys.exit(f"build_projection: --figures {args.figures}: {exc}; run benchmarks/build_throughput.py --json-out")
    terms = QUICK_TERMS if args.quick else 200_000
    print(projection_report(found, args.cores, args.vocabulary, args.length_factor, args.memory_factor, terms))


if __name__ == "__main__":
    main()

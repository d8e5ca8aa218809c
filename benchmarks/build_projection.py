"""MS MARCO v2.1 segmented's `lucene_bm25` build (113,520,750 passages) on 8, 32 and 128 nodes of 16 cores,
projected from build_throughput.py's measured figures (`--figures`, default the latest run's,
benchmarks/figures/build_throughput-token-cache.json): computed, not typed, each input printed with where it came
from. The builds:

- today's (`index build --ray`, then the split): the driver reads every passage, merges every block and writes the
  one index, then splits it; the workers analyse. Time = passages x (driver + split) CPU us, serial on the head,
  + passages x worker CPU us / (nodes x cores). Head memory: the driver's peak, fitted over the measured sizes as
  fixed + per passage. A node: `cores` workers at their measured peak.
- shard-parallel (each core builds its own shard from its own part of the corpus, as a one-process build of that
  part does; only per-term statistics travel): time = passages x the one-process build's CPU us / (nodes x cores)
  + the statistics' merge; a process: the one-process build's peak at passages / (nodes x cores) (fitted as
  above). The merge, of `--vocabulary` terms (assumed: MS MARCO v2.1's term count is not measured here), each
  part's vocabulary taken as the whole one (an upper bound), at the bytes a term and the ns an update of a Python
  dict of str -> int measured here (as a driver that merges document frequencies in Python holds them), either
  on the head (each node's cores merged on the node first, then nodes x terms updates on the head, which holds
  every term) or by term across the nodes (each node merges its 1/nodes of the terms from every node: terms
  updates a node, in parallel; the head holds none).

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
from pathlib import Path
from typing import Any

MSMARCO = 113_520_750
NODES = (8, 32, 128)
FIGURES = Path(__file__).with_name("figures") / "build_throughput-token-cache.json"
GOALS = {"minutes_32": 15, "process_gb": 8, "head_gb": 2}
ANSERINI_PER_THREAD = 3500  # passages/s a thread: MS MARCO v2 passage, 18 threads (anserini PR #1611; the issue)
GB = 1e9


def dict_term_cost(terms: int = 200_000) -> tuple[float, float]:
    """(bytes a term, seconds a term-update) of a Python dict of str -> int document frequencies."""
    tracemalloc.start()
    frequencies = {f"term{n:09d}": n for n in range(terms)}
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    times = []
    for _ in range(5):  # the least (as timeit: other work only adds time)
        started = time.perf_counter()
        for term in frequencies:
            frequencies[term] += 1
        times.append(time.perf_counter() - started)
    return size / terms, min(times) / terms


def memory_line(sizes: dict[str, Any], label: str) -> tuple[float, float]:
    """(fixed bytes, bytes a passage) of `label`'s peak memory through the measured sizes (least squares); one size
    alone: all of it per passage (errs high)."""
    points = [(int(p), row[label]["peak_mb"] * (1 << 20)) for p, row in sizes.items() if label in row]
    if len(points) < 2:
        return 0.0, points[0][1] / points[0][0]
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)
    return mean_y - slope * mean_x, slope


def rates(found: dict[str, Any]) -> dict[str, Any]:
    """CPU us a passage of each part, from the largest measured size that has a --ray row."""
    sizes = found["sizes"]
    plain = [int(p) for p, row in sizes.items() if any(k.startswith("--ray") and "shards" not in k for k in row)]
    passages = max(plain, default=None)
    if passages is None:
        raise SystemExit("build_projection: no --ray figures without --shards: run build_throughput.py with --workers")
    row = sizes[str(passages)]
    ray_label = max((k for k in row if k.startswith("--ray") and "shards" not in k), key=lambda k: int(k.split()[1]))
    ray = row[ray_label]
    got = {
        "passages": passages,
        "ray_label": ray_label,
        "one_us": row["one process"]["cpu_s"] / passages * 1e6,
        "driver_us": ray["cpu_s"] / passages * 1e6,
        "worker_us": sum(w["cpu_s"] for w in ray["workers"]) / passages * 1e6,
        "worker_mb": ray["worker_peak_mb"],
        "split_us": 0.0,
        "load": ray["load"],
    }
    got["split_us"], got["split_passages"] = split_cost(sizes)
    pyserini = row.get("pyserini, 1 threads")
    if pyserini:
        got["pyserini_rate"] = passages / (pyserini["wall_s"] - row.get("pyserini startup_s", 0.0))
        got["pyserini_cpu_rate"] = passages / (pyserini["cpu_s"] - row.get("pyserini startup_cpu_s", 0.0))
    got["one_rate"] = passages / row["one process"]["wall_s"]
    got["one_cpu_rate"] = passages / row["one process"]["cpu_s"]
    got["driver_line"] = memory_line(sizes, ray_label)
    got["one_line"] = memory_line(sizes, "one process")
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
        fits = f"{(room - fixed) / each:,.0f} passages" if each > 0 else "no limit measured"
        if label.startswith("pyserini"):  # Lucene writes a segment each time its RAM buffer fills
            fits = "not bounded by memory (segments flushed)"
        wall = figures["wall_s"] - sizes[largest].get("pyserini startup_s", 0.0) * label.startswith("pyserini")
        lines.append(f"| {label} | {fits} | {int(largest) / wall * 3600 * hours:,.0f} passages |")
    return lines


def split_cost(sizes: dict[str, Any]) -> tuple[float, int]:
    """(driver's CPU us a passage that `--shards W` adds, at which size) from the largest size measured both with
    and without it: today's --shards splits the built index on the driver."""
    for passages in sorted(sizes, key=int, reverse=True):
        pairs = [(k, f"{k}, --shards {k.split()[1]}") for k in sizes[passages] if k.startswith("--ray")]
        pairs = [(a, b) for a, b in pairs if b in sizes[passages]]
        if pairs:
            a, b = pairs[-1]
            extra = sizes[passages][b]["cpu_s"] - sizes[passages][a]["cpu_s"]
            return max(0.0, extra / int(passages) * 1e6), int(passages)
    return 0.0, 0


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
    (driver_fixed, driver_each), (one_fixed, one_each) = r["driver_line"], r["one_line"]
    cpu = length
    lines = [
        f"inputs: {r['passages']:,} passages measured on {found['machine']} (load {r['load']}):",
        f"  one process: {r['one_us']:.0f} CPU us a passage ({r['one_cpu_rate']:,.0f} passages/CPU s; "
        f"{r['one_rate']:,.0f} passages/s wall); peak memory {one_fixed / 2**20:.0f} MB + {one_each:.0f} B a passage",
        f"  {r['ray_label']}: driver {r['driver_us']:.0f} CPU us a passage (serial), workers {r['worker_us']:.0f} "
        f"({1e6 / r['worker_us']:,.0f} passages/CPU s a worker), split {r['split_us']:.0f} (at "
        f"{r['split_passages']:,} passages); driver's peak "
        f"{driver_fixed / 2**20:.0f} MB + {driver_each:.0f} B a passage; a worker's peak {r['worker_mb']:.0f} MB",
    ]
    if "pyserini_rate" in r:
        lines.append(
            f"  pyserini, 1 thread: {r['pyserini_rate']:,.0f} passages/s wall, {r['pyserini_cpu_rate']:,.0f} "
            "passages/CPU s (its JVM's start taken off)"
        )
    lines += [
        f"  a passage of MS MARCO v2.1 segmented: CPU x{length} the synthetic one's, memory x{memory} (assumed)",
        f"  statistics: a Python dict of str -> int holds {term_bytes:.0f} B a term, an update takes "
        f"{term_s * 1e9:.0f} ns (measured here); {vocabulary:,} terms (assumed), each part's vocabulary taken as"
        " whole (an upper bound)",
        "",
        f"| build of {MSMARCO:,} passages | nodes x {cores} cores | build time | memory a node | largest process "
        "| head's memory |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    verdict: dict[str, list[bool]] = {}
    for nodes in NODES:
        shards = nodes * cores
        rows = {}
        serial = MSMARCO * (r["driver_us"] + r["split_us"]) * cpu / 1e6
        head = driver_fixed + driver_each * memory * MSMARCO
        rows["today (the driver merges every block)"] = (
            serial + MSMARCO * r["worker_us"] * cpu / 1e6 / shards,
            0.0,
            cores * r["worker_mb"] * 2**20,
            head,
        )
        analyse = MSMARCO * r["one_us"] * cpu / 1e6 / shards
        process = one_fixed + one_each * memory * MSMARCO / shards
        rows["shard-parallel, statistics merged on the head"] = (
            analyse + nodes * vocabulary * term_s, nodes * vocabulary * term_s, cores * process,
            driver_fixed + vocabulary * term_bytes,
        )  # fmt: skip
        rows["shard-parallel, statistics merged by term across the nodes"] = (
            analyse + vocabulary * term_s, vocabulary * term_s, cores * process + vocabulary / nodes * term_bytes,
            driver_fixed,
        )  # fmt: skip
        for build, (seconds, merge, node, head) in rows.items():
            biggest = max(head, node / cores)
            merged = f" (merge {duration(merge)})" if merge else ""
            lines.append(
                f"| {build} | {nodes} | {duration(seconds)}{merged} | {node / GB:.1f} GB | {biggest / GB:.1f} GB "
                f"| {head / GB:.1f} GB |"
            )
            verdict.setdefault(build, [])
            verdict[build] += [nodes != 32 or seconds <= GOALS["minutes_32"] * 60]
            verdict[build] += [biggest <= GOALS["process_gb"] * GB, head <= GOALS["head_gb"] * GB]
    lines += ["", per_core_line(r)]
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

"""MS MARCO v2.1 segmented's `lucene_bm25` build (113,520,750 passages) on 8, 32 and 128 nodes of 16 cores,
projected from build_throughput.py's measured figures (`--figures`, default benchmarks/figures/build_throughput.json):
computed, not typed, each input printed with where it came from. Two builds:

- today's (`index build --ray`, then the split): the driver reads every passage, merges every block and writes the
  one index, then splits it; the workers analyse. Time = passages x (driver + split) CPU us, serial on the head,
  + passages x worker CPU us / (nodes x cores). Head memory: the driver's peak, fitted over the measured sizes as
  fixed + per passage. A node: `cores` workers at their measured peak.
- shard-parallel (each core builds its own shard from its own part of the corpus, as a one-process build of that
  part does; only per-term statistics travel): time = passages x the one-process build's CPU us / (nodes x cores)
  + the statistics' merge on the head; a process: the one-process build's peak at passages / (nodes x cores)
  (fitted as above); the head: the driver's fixed part + the merged vocabulary (`--vocabulary` terms, an
  assumption: the real count of MS MARCO v2.1's terms is not measured here, x the bytes a term of a Python
  dict of str -> int measured here, as a driver that merges document frequencies holds them); its merge time:
  terms x shards x the ns a dict update measured here.

Per passage CPU and memory are scaled by `--length-factor` (MS MARCO v2.1's segments against the synthetic 60 words
a passage; 2 by default, as docs/scale-out.md estimates it); the per-core rate's goal (Anserini's 3,500-4,000
passages/s a thread on MS MARCO v2 passages, anserini PR #1611) is compared unscaled (those passages are about as
long as the synthetic ones) and against pyserini on the same corpus.

    python benchmarks/build_projection.py [--figures FILE] [--vocabulary 50000000] [--length-factor 2]
    python benchmarks/build_projection.py --quick     # the same (it measures only a dict's bytes a term)
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
FIGURES = Path(__file__).with_name("figures") / "build_throughput.json"
GOALS = {"per_thread": 3500, "minutes_32": 15, "process_gb": 8, "head_gb": 2}
GB = 1e9


def dict_term_cost(terms: int = 200_000) -> tuple[float, float]:
    """(bytes a term, seconds a term-update) of a Python dict of str -> int document frequencies."""
    tracemalloc.start()
    frequencies = {f"term{n:09d}": n for n in range(terms)}
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    started = time.perf_counter()
    for term in frequencies:
        frequencies[term] += 1
    return size / terms, (time.perf_counter() - started) / terms


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
    passages = max((int(p) for p, row in sizes.items() if any(k.startswith("--ray") for k in row)), default=None)
    if passages is None:
        raise SystemExit("build_projection: no --ray figures: run build_throughput.py with --workers")
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
    split_label = f"{ray_label}, --shards {ray_label.split()[1]}"
    if split_label in row:  # today's --shards: the driver splits after the build (more CPU on the driver)
        got["split_us"] = max(0.0, (row[split_label]["cpu_s"] - ray["cpu_s"]) / passages * 1e6)
    pyserini = row.get("pyserini, 1 threads")
    if pyserini:
        got["pyserini_rate"] = passages / (pyserini["wall_s"] - row.get("pyserini startup_s", 0.0))
        got["pyserini_cpu_rate"] = passages / pyserini["cpu_s"]
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
        fits = f"{(room - fixed) / each:,.0f}" if each > 0 else "no limit measured"
        wall = figures["wall_s"] - sizes[largest].get("pyserini startup_s", 0.0) * label.startswith("pyserini")
        lines.append(f"| {label} | {fits} passages | {int(largest) / wall * 3600 * hours:,.0f} passages |")
    return lines


def duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def projection_report(found: dict[str, Any], cores: int = 16, vocabulary: int = 50_000_000, length: float = 2.0) -> str:
    r = rates(found)
    term_bytes, term_s = dict_term_cost()
    (driver_fixed, driver_each), (one_fixed, one_each) = r["driver_line"], r["one_line"]
    lines = [
        f"inputs: {r['passages']:,} passages measured on {found['machine']} (load {r['load']}):",
        f"  one process: {r['one_us']:.0f} CPU us a passage ({r['one_cpu_rate']:,.0f} passages/CPU s; "
        f"{r['one_rate']:,.0f} passages/s wall); peak memory {one_fixed / 2**20:.0f} MB + {one_each:.0f} B a passage",
        f"  {r['ray_label']}: driver {r['driver_us']:.0f} CPU us a passage (serial), workers {r['worker_us']:.0f} "
        f"({1e6 / r['worker_us']:,.0f} passages/CPU s a worker), split {r['split_us']:.0f}; driver's peak "
        f"{driver_fixed / 2**20:.0f} MB + {driver_each:.0f} B a passage; a worker's peak {r['worker_mb']:.0f} MB",
        f"  merge: a Python dict of str -> int holds {term_bytes:.0f} B a term, updates take {term_s * 1e9:.0f} ns a"
        f" term (measured here); assumed {vocabulary:,} terms; passages {length}x the synthetic length",
    ]
    if "pyserini_rate" in r:
        lines.append(
            f"  pyserini, 1 thread: {r['pyserini_rate']:,.0f} passages/s wall (JVM start taken off), "
            f"{r['pyserini_cpu_rate']:,.0f} passages/CPU s"
        )
    lines += [
        "",
        f"| build | nodes x {cores} cores | build time | memory a node | largest process | head's memory |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    passages = MSMARCO * length  # passage-equivalents of the synthetic corpus
    verdict: dict[str, list[bool]] = {"today": [], "shard-parallel": []}
    for nodes in NODES:
        shards = nodes * cores
        serial = passages * (r["driver_us"] + r["split_us"]) / 1e6
        today_s = serial + passages * r["worker_us"] / 1e6 / shards
        head = driver_fixed + driver_each * passages
        biggest = max(head, r["worker_mb"] * 2**20)
        lines.append(
            f"| today (driver merges all) | {nodes} | {duration(today_s)} | {cores * r['worker_mb'] / 1024:.1f} GB "
            f"| {biggest / GB:.1f} GB | {head / GB:.1f} GB |"
        )
        verdict["today"] += [nodes != 32 or today_s <= GOALS["minutes_32"] * 60]
        verdict["today"] += [biggest <= GOALS["process_gb"] * GB, head <= GOALS["head_gb"] * GB]
        process = one_fixed + one_each * passages / shards
        merge_s = vocabulary * shards * term_s
        parallel_s = passages * r["one_us"] / 1e6 / shards + merge_s
        head = driver_fixed + vocabulary * term_bytes
        lines.append(
            f"| shard-parallel (a shard a core) | {nodes} | {duration(parallel_s)} (merge {merge_s:.0f} s) "
            f"| {cores * process / GB:.1f} GB | {max(process, head) / GB:.1f} GB | {head / GB:.1f} GB |"
        )
        verdict["shard-parallel"] += [nodes != 32 or parallel_s <= GOALS["minutes_32"] * 60]
        verdict["shard-parallel"] += [max(process, head) <= GOALS["process_gb"] * GB, head <= GOALS["head_gb"] * GB]
    rate = r["one_cpu_rate"] / length
    lines += [
        "",
        f"goal: per-core rate >= Anserini's {GOALS['per_thread']:,}-4,000 passages/s a thread: ragbench "
        f"{r['one_cpu_rate']:,.0f} passages/CPU s on the synthetic passages ({rate:,.0f} at {length}x their length): "
        + ("met" if r["one_cpu_rate"] >= GOALS["per_thread"] else "not met")
        + (
            f"; pyserini on the same corpus {r['pyserini_cpu_rate']:,.0f} passages/CPU s (ragbench "
            f"{r['one_cpu_rate'] / r['pyserini_cpu_rate']:.2f}x)"
            if "pyserini_cpu_rate" in r
            else ""
        ),
    ]
    lines += ["", *this_machine(found)]
    for build, checks in verdict.items():
        met = [all(checks[i::3]) for i in range(3)]
        names = ("<= 15 min on 32 nodes", "no process over 8 GB (8-128 nodes)", "head under 2 GB")
        lines.append(f"goals, {build}: " + "; ".join(f"{n}: {'met' if m else 'not met'}" for n, m in zip(names, met)))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figures", type=Path, default=FIGURES, help="build_throughput.py --json-out's figures")
    parser.add_argument("--cores", type=int, default=16, help="cores a node")
    parser.add_argument("--vocabulary", type=int, default=50_000_000, help="terms of the corpus (assumed)")
    parser.add_argument("--length-factor", type=float, default=2.0, help="passage length against the synthetic")
    parser.add_argument("--quick", action="store_true", help="the same: the script runs")
    args = parser.parse_args()
    try:
        found = json.loads(args.figures.read_text())
    except (OSError, ValueError) as exc:
        sys.exit(f"build_projection: --figures {args.figures}: {exc}; run benchmarks/build_throughput.py --json-out")
    print(projection_report(found, args.cores, args.vocabulary, args.length_factor))


if __name__ == "__main__":
    main()

"""Where a shard-parallel `lucene_bm25` build's wall time goes: one `ragbench index build --ray ADDRESS --workers 3
--shards 3` on a local Ray cluster shaped as build_throughput.py's (a head of 0 CPUs, 3 nodes of 1 CPU), and for
each of its steps (Ray's task timeline: step 1 `analyse_part`, the middle step `merge_bucket`, step 2
`finish_part`) its span, each task's wall, the CPU seconds this cluster's processes (the driver, the workers,
Ray's own) spent in it and how many cores
the whole machine was busy meanwhile (psutil, every 0.25 s); the driver's time before the first task and after
the last. On a machine shared with other work a step's tasks get the cores the other work leaves them: their CPU
over their wall says how many.

    python benchmarks/shard_build_timeline.py --passages 1000000      # the corpus of build_throughput.py
    python benchmarks/shard_build_timeline.py --quick                 # 2,000 passages, a head of 2 CPUs alone: the script runs
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from build_throughput import SamplingThread, load, start_cluster
from sharded_search import write_corpus

STEPS = ("analyse_part", "merge_bucket", "finish_part")


class CpuWatch(SamplingThread):
    """Every 0.25 s: the machine's busy CPU seconds and each process under this one's CPU seconds."""

    def __init__(self) -> None:
        super().__init__()
        self.samples: list[tuple[float, float, dict[int, float]]] = []

    def sample(self) -> None:
        times = psutil.cpu_times()
        busy = times.user + times.nice + times.system + times.irq + times.softirq + getattr(times, "steal", 0.0)
        processes = {}
        for process in psutil.Process().children(recursive=True):
            try:
                used = process.cpu_times()
            except psutil.Error:
                continue
            processes[process.pid] = used.user + used.system
        self.samples.append((time.time(), busy, processes))

    def between(self, start: float, end: float) -> tuple[float, float]:
        """(CPU seconds of the processes under this one, the machine's busy cores) from `start` to `end`: each
        process's as last seen by then (the driver ends before the build's end is seen)."""
        before = [s for s in self.samples if s[0] <= start] or self.samples[:1]
        after = [s for s in self.samples if s[0] >= end] or self.samples[-1:]
        first, last = before[-1], after[0]
        seen: dict[int, float] = {}
        for moment, _, processes in self.samples:
            if moment <= last[0]:
                seen.update(processes)
        ours = sum(cpu - first[2].get(pid, 0.0) for pid, cpu in seen.items())
        return ours, (last[1] - first[1]) / max(last[0] - first[0], 1e-9)


def task_spans(address: str) -> dict[str, list[tuple[float, float]]]:
    """Each step's tasks' (start, end), from Ray's timeline (epoch seconds), read every second (the workers report
    their task events every second or so) until a read finds every step's tasks and no more than the one before
    found, or for 5 s at most."""
    import ray

    ray.init(address=address, logging_level="ERROR")
    try:
        spans, deadline = steps(ray.timeline(filename=None)), time.time() + 5
        while time.time() < deadline:
            time.sleep(1)
            before, spans = spans, steps(ray.timeline(filename=None))
            if spans == before and all(spans.values()):
                break
    finally:
        ray.shutdown()
    return spans


def steps(events: list[dict]) -> dict[str, list[tuple[float, float]]]:
    """Each step's tasks' (start, end) in Ray's timeline `events`."""
    spans: dict[str, list[tuple[float, float]]] = {step: [] for step in STEPS}
    for event in events:
        step = str(event.get("name", "")).rsplit(".", 1)[-1]
        if event.get("ph") == "X" and step in spans:
            spans[step].append((event["ts"] / 1e6, (event["ts"] + event["dur"]) / 1e6))
    return spans


def report(spans: dict[str, list[tuple[float, float]]], watch: CpuWatch, started: float, ended: float) -> list[str]:
    lines = [f"build wall {ended - started:.1f} s; load average at the end {load()}"]
    for step, tasks in spans.items():
        if not tasks:
            lines.append(f"  {step:13s} no task in Ray's timeline")
            continue
        first, last = min(s for s, _ in tasks), max(e for _, e in tasks)
        ours, busy = watch.between(first, last)
        walls = ", ".join(f"{end - start:.1f}" for start, end in sorted(tasks))
        share = f" ({ours / (last - first):.2f} cores)" if last - first >= 1 else ""  # shorter: under the sampling
        lines.append(
            f"  {step:13s} {first - started:6.1f} s to {last - started:6.1f} s, {len(tasks)} tasks' wall {walls} s;"
            f" this cluster's processes {ours:.1f} CPU s{share}, the machine busy {busy:.2f} cores"
        )
    starts = [s for tasks in spans.values() for s, _ in tasks]
    ends = [e for tasks in spans.values() for _, e in tasks]
    if starts:
        ours, busy = watch.between(started, ended)
        lines.append(
            f"  driver alone: {min(starts) - started:.1f} s before the first task, {ended - max(ends):.1f} s after the"
            f" last; over the whole build this cluster's processes {ours:.1f} CPU s ({ours / (ended - started):.2f}"
            f" cores), the machine busy {busy:.2f} cores of {psutil.cpu_count()}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--work-dir", type=Path, help="keep the corpus here (default: a temporary folder)")
    parser.add_argument(
        "--quick", action="store_true", help="2,000 passages, 2 workers, 2 shards, a head of 2 CPUs alone"
    )
    args = parser.parse_args()
    passages, workers = (2_000, 2) if args.quick else (args.passages, 3)
    cluster = start_cluster(0, cpus=workers, quick=True) if args.quick else start_cluster(workers)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = args.work_dir or Path(tmp)
            corpus = work / f"corpus-{passages}" / "corpus.jsonl"
            corpus.parent.mkdir(parents=True, exist_ok=True)
            write_corpus(corpus, passages)
            command = [sys.executable, "-m", "ragbench", "index", "build", "--corpus", str(corpus), "--retriever"]
            command += ["lucene_bm25", "--out", str(Path(tmp) / "index"), "--chunk-size", "10000", "--no-progress"]
            command += ["--ray", cluster.address, "--workers", str(workers), "--shards", str(workers)]
            with CpuWatch() as watch:
                started = time.time()
                subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ))
                ended = time.time()
                time.sleep(0.3)
            print("\n".join(report(task_spans(cluster.address), watch, started, ended)))
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()

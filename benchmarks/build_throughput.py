"""`lucene_bm25` index build throughput on one machine: ragbench in one process, `--ray` on a local multi-node Ray
cluster with 1, 2, 3 workers, and pyserini's Lucene indexer on the same corpus with 1 and 2 threads; the peak
memory of every process; and, from the measured rates, MS MARCO v2.1 segmented on 8, 32 and 128 nodes.

Every build is `ragbench index build` (or `python -m pyserini.index.lucene`) as a user runs it, a process of its
own, so whichever implementation of `--ray` / `--shards` the checkout has is what is measured:

  one process        ragbench index build --corpus C --retriever lucene_bm25 --out O --chunk-size K
  --ray, W workers   ... --ray ADDRESS --workers W, on a `ray.cluster_utils.Cluster` of this machine: a head of
                     0 CPUs (the driver's node) and 3 nodes of 1 CPU (started once, first; its start is in no
                     figure); with `--shards S` too where asked (`--shards`)
  pyserini, T thr.   python -m pyserini.index.lucene --collection JsonCollection --input DIR --index O
                     --generator DefaultLuceneDocumentGenerator --threads T --storeRaw (ragbench's lucene_bm25
                     stores the same: each passage's terms and frequencies, its norm, and its raw text; no positions
                     nor document vectors, which `--pyserini-options` can add); JAVA_HOME a Java 21+

Each process's peak resident memory is its own (os.wait4's ru_maxrss, the JVM's included in pyserini's process),
its CPU seconds too; the Ray workers' (each `ray::` actor process) are read from /proc while the build runs
(VmHWM, CPU time, every 0.2 s). On a machine shared with other work wall time moves with the load, CPU seconds
much less: both are printed, with the load average, for the best (least wall) of `--repeats` runs of each.

The corpus: sharded_search.py's synthetic passages (20-100 words of a Zipf-like 5,000-word vocabulary, JSONL
{id, contents}), one file that both indexers read (pyserini's JsonCollection reads the folder it is in).

    python benchmarks/build_throughput.py --pyserini-python /tmp/pyserini-venv/bin/python   # 10^5 passages
    python benchmarks/build_throughput.py --passages 1000000 --workers 2 --repeats 1 ...       # one large size
    python benchmarks/build_throughput.py --quick       # 2,000 passages, 1 worker on the head: the script runs
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, TypeVar

import psutil
from build_projection import QUICK_TERMS, projection_report
from sharded_search import QUICK_HEAD, machine, write_corpus

MB = 1 << 20
NODES = 3
PYSERINI_OPTIONS = "--storeRaw"
RAY_OWN = ("ray::IDLE", "ray::DashboardAgent", "ray::RuntimeEnvAgent")  # not the build's workers


def load() -> list[float]:
    return [round(x, 1) for x in os.getloadavg()]


Watch = TypeVar("Watch", bound="SamplingThread")


class SamplingThread:
    """A thread that samples something every `every` seconds while a `with` block runs (`sample`: what it reads)."""

    every = 0.25  # seconds between samples

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self: Watch) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def sample(self) -> None:
        raise NotImplementedError


class RayWorkerWatch(SamplingThread):
    """The `ray::` worker processes under this script (its cluster's raylets are its children) seen while a build
    runs: per process, the peak resident memory (VmHWM), CPU seconds and the name it ran under (not IDLE)."""

    every = 0.2

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[int, dict[str, Any]] = {}

    def sample(self) -> None:
        for process in psutil.Process().children(recursive=True):
            try:
                name = process.cmdline()[0] if process.cmdline() else ""
                if not name.startswith("ray::") or name.startswith(RAY_OWN):
                    continue
                status = Path(f"/proc/{process.pid}/status").read_text()
                hwm = int(next(x for x in status.splitlines() if x.startswith("VmHWM")).split()[1]) * 1024 / MB
                cpu = sum(process.cpu_times()[:2])
            except (psutil.Error, OSError, StopIteration):
                continue
            entry = self.seen.setdefault(
                process.pid, {"name": name.split()[0].split(".")[0], "peak_mb": 0.0, "cpu_s": 0.0}
            )
            entry["peak_mb"], entry["cpu_s"] = max(entry["peak_mb"], hwm), max(entry["cpu_s"], cpu)

    def workers(self) -> list[dict[str, Any]]:
        return sorted(self.seen.values(), key=lambda w: -w["cpu_s"])


def timed(command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Runs `command`: its wall seconds, CPU seconds and peak resident memory (its own, by os.wait4)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if process.returncode:
        tail = errors.decode(errors="replace").strip().splitlines()[-1:]
        raise SystemExit(f"build_throughput: {' '.join(command[:6])} ... exited {process.returncode}: {tail}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024}


def best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The least-wall run, with the highest peak memory of all (memory is not helped by luck)."""
    chosen = dict(min(runs, key=lambda r: r["wall_s"]))
    chosen["peak_mb"] = max(r["peak_mb"] for r in runs)
    chosen["load"] = load()
    if "workers" in chosen:
        chosen["worker_peak_mb"] = max((w["peak_mb"] for r in runs for w in r["workers"]), default=0.0)
    return chosen


def merged(earlier: dict[str, Any], figures: dict[str, Any]) -> dict[str, Any]:
    """A size's figures with an earlier run's (--json-out): each build's least-wall run, the highest peak memory."""
    both = earlier | figures
    for label, old in earlier.items():
        new = figures.get(label)
        if isinstance(old, dict) and isinstance(new, dict):
            both[label] = (old if old["wall_s"] < new["wall_s"] else new) | {
                "peak_mb": max(old["peak_mb"], new["peak_mb"])
            }
    return both


def ragbench_build(corpus: Path, out: Path, chunk: int, ray: str | None, workers: int, shards: int) -> dict:
    command = [sys.executable, "-m", "ragbench", "index", "build", "--corpus", str(corpus)]
    command += ["--retriever", "lucene_bm25", "--out", str(out), "--chunk-size", str(chunk), "--no-progress"]
    if ray:
        command += ["--ray", ray, "--workers", str(workers)] + (["--shards", str(shards)] if shards else [])
    with RayWorkerWatch() as watch:
        got = timed(command)
    if ray:
        got["workers"] = watch.workers()
    shutil.rmtree(out)  # a folder this script made
    return got


def pyserini_build(python: str, folder: Path, out: Path, threads: int, options: str) -> dict:
    env = dict(os.environ, JAVA_HOME=os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"))
    command = [python, "-m", "pyserini.index.lucene", "--collection", "JsonCollection", "--input", str(folder)]
    command += ["--index", str(out), "--generator", "DefaultLuceneDocumentGenerator", "--threads", str(threads)]
    got = timed(command + options.split(), env)
    shutil.rmtree(out)
    return got


def start_cluster(nodes: int, cpus: int = 1, quick: bool = False) -> Any:
    """A head of 0 CPUs (the driver's node) and `nodes` nodes of `cpus` CPUs, all on this machine; with no nodes
    (--quick: one node fewer to start), the head alone with the `cpus`; `quick`: the head `QUICK_HEAD`."""
    from ray.cluster_utils import Cluster

    head = {"num_cpus": 0 if nodes else cpus, "include_dashboard": False, **(QUICK_HEAD if quick else {})}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    for _ in range(nodes):
        cluster.add_node(num_cpus=cpus)
    cluster.wait_for_nodes()
    return cluster


def measure_size(args: argparse.Namespace, work: Path, passages: int, address: str | None) -> dict[str, Any]:
    folder = work / f"corpus-{passages}"
    folder.mkdir(exist_ok=True)
    corpus = folder / "corpus.jsonl"
    write_corpus(corpus, passages)
    out = work / "index"
    figures: dict[str, Any] = {"passages": passages}
    repeat = range(args.repeats)
    figures["one process"] = best([ragbench_build(corpus, out, args.chunk_size, None, 1, 0) for _ in repeat])
    report_row(figures, "one process")
    for workers in args.workers if address else []:
        for shards in [0] + ([workers] if args.shards else []):
            label = f"--ray, {workers} worker{'s' * (workers > 1)}" + (f", --shards {shards}" if shards else "")
            runs = [ragbench_build(corpus, out, args.chunk_size, address, workers, shards) for _ in repeat]
            figures[label] = best(runs)
            report_row(figures, label)
    if args.pyserini_python:
        startup = pyserini_build(args.pyserini_python, work / "startup", out, 1, args.pyserini_options)
        figures["pyserini startup_s"], figures["pyserini startup_cpu_s"] = startup["wall_s"], startup["cpu_s"]
        for threads in args.pyserini_threads:
            label = f"pyserini, {threads} threads"
            runs = [pyserini_build(args.pyserini_python, folder, out, threads, args.pyserini_options) for _ in repeat]
            figures[label] = best(runs) | {"threads": threads}
            report_row(figures, label)
    return figures


def report_row(figures: dict[str, Any], label: str) -> None:
    passages, r = figures["passages"], figures[label]
    jvm = label.startswith("pyserini")  # its JVM's start and end taken off its rates
    wall = r["wall_s"] - figures.get("pyserini startup_s", 0.0) * jvm
    cpu = r["cpu_s"] - figures.get("pyserini startup_cpu_s", 0.0) * jvm
    line = (
        f"{passages:>9,} {label:32s} wall {r['wall_s']:8.1f} s ({passages / wall:7,.0f} passages/s) "
        f"CPU {r['cpu_s']:8.1f} s ({passages / cpu:7,.0f} passages/CPU s) peak {r['peak_mb']:6.0f} MB"
    )
    if "workers" in r:
        analysers = [w for w in r["workers"] if w["cpu_s"] > 0]
        rates = ", ".join(f"{passages / len(analysers) / w['cpu_s']:,.0f}" for w in analysers)
        peaks = ", ".join(f"{w['peak_mb']:.0f}" for w in analysers)
        line += f"\n{'':42s}driver (serial) {r['cpu_s'] / passages * 1e6:.0f} CPU us a passage; workers"
        line += f" [{', '.join(w['name'] for w in analysers)}]: {rates} passages/CPU s each, peak {peaks} MB"
    print(f"{line}; load {r['load']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", default="100000", help="comma-separated corpus sizes")
    parser.add_argument("--workers", default="1,2,3", help="comma-separated --ray worker counts (at most 3)")
    parser.add_argument("--shards", action="store_true", help="each --ray build also with --shards W")
    parser.add_argument("--chunk-size", type=int, default=10_000, help="passages a block")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each build; the least wall time counts")
    parser.add_argument("--pyserini-python", help="an interpreter with pyserini (JAVA_HOME: Java 21+)")
    parser.add_argument("--pyserini-threads", default="1,2")
    parser.add_argument("--pyserini-options", default=PYSERINI_OPTIONS, help="what pyserini stores")
    parser.add_argument("--work-dir", type=Path, help="keep the corpora here (default: a temporary folder)")
    parser.add_argument("--json-out", type=Path, help="add the figures to this JSON file (by corpus size)")
    parser.add_argument("--quick", action="store_true", help="2,000 passages, 1 worker on the head, 1 run")
    args = parser.parse_args()
    if args.quick:
        args.passages, args.workers, args.chunk_size, args.repeats, args.shards = "2000", "1", 500, 1, True
    args.workers = [int(w) for w in args.workers.split(",") if w]
    args.pyserini_threads = [int(t) for t in args.pyserini_threads.split(",")]
    if args.pyserini_python and not Path(args.pyserini_python).is_file():
        print(f"pyserini: skipped: --pyserini-python {args.pyserini_python} is not a file")
        args.pyserini_python = None
    elif not args.pyserini_python:
        print("pyserini: skipped: no --pyserini-python (an interpreter with pyserini installed)")
    print(f"machine: {machine()}; load average {load()}")
    nodes = 0 if args.quick else min(NODES, max(args.workers, default=0))
    cluster = start_cluster(nodes, quick=args.quick) if args.workers else None
    found = json.loads(args.json_out.read_text()) if args.json_out and args.json_out.is_file() else {}
    found.setdefault("machine", machine())
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = args.work_dir or Path(tmp)
            (work / "startup").mkdir(parents=True, exist_ok=True)
            write_corpus(work / "startup" / "corpus.jsonl", 10)  # pyserini's JVM start and end, taken off
            for passages in (int(p) for p in args.passages.split(",")):
                figures = measure_size(args, work, passages, cluster.address if cluster else None)
                sizes = found.setdefault("sizes", {})
                sizes[str(passages)] = merged(sizes.get(str(passages), {}), figures)
                if args.json_out:
                    args.json_out.write_text(json.dumps(found, indent=1) + "\n")
    finally:
        if cluster:
            cluster.shutdown()
    print(projection_report(found, terms=QUICK_TERMS) if args.quick else projection_report(found))


if __name__ == "__main__":
    main()

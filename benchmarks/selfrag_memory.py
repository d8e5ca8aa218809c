"""Self-RAG on the vllm engine: the peak memory of the run's whole process tree, with vLLM keeping every running
request's whole log-prob window at each position made (as before) and with ragbench cutting each position to the
entries it reads as vLLM makes it (ragbench._engines.vllm.positions).

`python -m ragbench --tasks popqa --system selfrag` (adaptive retrieval, threshold 0.2, ndocs 5, max_new_tokens 10:
the end-to-end check against upstream's run_short_form.py, tests/systems/selfrag/test_selfrag_window_parity.py) on
tests/data/selfrag/popqa_window.jsonl (24 questions) with --max-inflight 16, each side in a fresh process:
  whole   ragbench with vllm_positions.keep_named switched off: vLLM keeps upstream's window (the top 32,016
          log-probs for the retrieval decision, 5,000 for each passage) at every position until the request ends
  cut     ragbench as it is
`--before DIR` makes the whole side an older ragbench instead (the package in DIR, e.g. built from the commit
before the cut: `git archive COMMIT | tar -x -C SRC; pip install --no-deps --target DIR SRC`), run in DIR so that
it is the one imported; `--cut-only` runs the cut side alone (where the whole one would not fit in memory).
Both sides must write the same predictions and Self-RAG traces (checked). The engine is the vLLM-shaped stand-in
(benchmarks/support/vllm_standin.py: vLLM 0.32's frontend as it holds log-probs, no model, no EngineCore process), or
with `--model DIR` real vLLM (installed in this Python) on a model folder that has Self-RAG's tokens
(tests/support/selfrag_window_model.py builds the parity test's; `--model-arg k=v` adds engine options).

Peak: the tree's RSS (the run and its children: vLLM's EngineCore and its Worker, compile workers) sampled every
50 ms, the largest sum split by process as it was then, and the ragbench process's own peak (the largest sample
and its VmHWM); CPU: the side's processes' user + system seconds (wall time on a shared machine says little).
`held` is what the whole side's positions hold at most at once by the structure (requests of one engine batch x
positions x window entries x bytes an entry).

Run: python benchmarks/selfrag_memory.py [--questions 24] [--max-inflight 16] [--tokens 10] [--model DIR]
     [--model-arg k=v] [--before DIR] [--cut-only] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "selfrag" / "popqa_window.jsonl"
SUPPORT = REPO / "benchmarks" / "support"
# the stand-in placed under vLLM's names before the run imports vllm (where no --model names real vLLM)
STANDIN = "import sys, vllm_standin; sys.modules.update(vllm_standin.as_vllm()); "
WHOLE = "import ragbench._engines.vllm.engine as engine; engine.keep_named = lambda *args: False; "
# vLLM builds and decodes each position's whole window, then ragbench cuts it (the cut as first shipped)
BUILT = (
    "import ragbench._engines.vllm.positions as positions; "
    "positions.NamedPositions = lambda processor, ids: processor._update_sample_logprobs; "
)
CUT = ""
ENTRY_BYTES = 290  # a position's entry in vLLM's dict: int key, Logprob(float, int rank, decoded str), dict slot


def label(process: Any, root: int) -> str:
    """A process of the tree as the breakdown names it: the ragbench run, vLLM's titled processes
    (VLLM::EngineCore, VLLM::Worker), everything else (compile workers, Ray, the reaper) as other."""
    if process.pid == root:
        return "ragbench"
    title = (process.cmdline() or [""])[0]
    return title if title.startswith("VLLM::") else "other"


def tree_peak(pid: int, stop: threading.Event, out: dict[str, Any]) -> None:
    """Sample the RSS of `pid` and its descendants every 50 ms until `stop`: out["tree_mb"] the largest sum,
    out["at_peak"] its split by `label` then, out["root_mb"] the largest RSS of `pid` alone (the ragbench
    process) and out["root_hwm_mb"] its VmHWM as last read."""
    import psutil

    root = psutil.Process(pid)
    while not stop.is_set():
        try:
            processes = [root, *root.children(recursive=True)]
        except psutil.Error:
            break
        split: dict[str, float] = {}
        for process in processes:
            try:
                rss = process.memory_info().rss / 2**20
                name = label(process, pid)
                if process.pid == pid:
                    status = Path(f"/proc/{pid}/status").read_text()
                    out["root_hwm_mb"] = int(status.split("VmHWM:")[1].split()[0]) / 1024
                    out["root_mb"] = max(out.get("root_mb", 0.0), rss)
            except (psutil.Error, OSError, IndexError):
                continue
            split[name] = split.get(name, 0.0) + rss
        if sum(split.values()) > out.get("tree_mb", 0.0):
            out["tree_mb"], out["at_peak"] = sum(split.values()), split
        stop.wait(0.05)


def run_side(prelude: str, checkout: Path, args: argparse.Namespace, folder: Path) -> dict:
    """One side in a fresh process run in `checkout` (so that its ragbench package is the one imported)."""
    model = f"vllm:{args.model}" if args.model else "vllm:/nonexistent/vllm-shaped-selfrag"
    command = [
        sys.executable,
        "-c",
        (STANDIN if not args.model else "") + prelude + "from ragbench._cli.entry import main; main()",
        *("--tasks", "popqa", "--data", f"popqa={DATA}", "--limit", str(args.questions), "--system", "selfrag"),
        *("--system-arg", "mode=adaptive_retrieval", "--system-arg", "threshold=0.2", "--system-arg", "ndocs=5"),
        *("--system-arg", f"max_new_tokens={args.tokens}", "--model", model, "--model-arg", "max_logprobs=32016"),
        *(arg for option in args.model_arg for arg in ("--model-arg", option)),
        *("--max-inflight", str(args.max_inflight), "--output", str(folder), "--no-progress"),
    ]
    env = dict(os.environ)
    if not args.model:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SUPPORT), env.get("PYTHONPATH", "")]))
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True, cwd=checkout
    )
    stop, peak = threading.Event(), {}
    sampler = threading.Thread(target=tree_peak, args=(process.pid, stop, peak))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    sampler.start()
    started = time.perf_counter()
    _, error = process.communicate()
    wall = time.perf_counter() - started
    stop.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"selfrag_memory: the run failed: {error.strip().splitlines()[-1:]}")
    lines = (folder / "samples" / "popqa.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [(s["prediction"]["answer"], s["prediction"]["extras"]["selfrag"]) for s in map(json.loads, lines)]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    examples = json.loads((folder / "results.json").read_text(encoding="utf-8"))["cost"]["wall_seconds"]
    timing = {"wall_s": wall, "examples_s": examples}
    return {**peak, "cpu_s": cpu, **timing, "samples": kept}


def held_mb(args: argparse.Namespace) -> float:
    """The whole side's positions at most at once by the structure: the retrieval decisions of the examples in
    flight (window 32,016) or their passages (5 each, window 5,000), whichever is more, at every position."""
    flight = min(args.max_inflight, args.questions)
    entries = args.tokens * max(flight * 32017, flight * 5 * 5001)
    return entries * ENTRY_BYTES / 2**20


def report(name: str, side: dict) -> dict:
    split = ", ".join(f"{who} {mb:.0f}" for who, mb in sorted(side["at_peak"].items()))
    print(
        f"  {name:5s}  tree peak {side['tree_mb']:6.0f} MB ({split})   ragbench alone {side['root_mb']:6.0f} MB "
        f"(VmHWM {side['root_hwm_mb']:.0f})   CPU {side['cpu_s']:6.1f} s   "
        f"examples {side['examples_s']:6.1f} s (wall {side['wall_s']:.0f} s, vLLM's start included)   "
        f"load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return side


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=24)
    parser.add_argument("--max-inflight", type=int, default=16)
    parser.add_argument("--tokens", type=int, default=10, help="max_new_tokens (every position holds a window)")
    parser.add_argument("--model", help="a model folder with Self-RAG's tokens: real vLLM instead of the stand-in")
    parser.add_argument("--model-arg", action="append", default=[], help="k=v, an engine option (real vLLM)")
    parser.add_argument("--before", help="the whole side: a folder holding an older ragbench package instead")
    parser.add_argument("--cut-only", action="store_true", help="only the cut side (where the whole would not fit)")
    parser.add_argument(
        "--built-cut", action="store_true", help="also the cut made from vLLM's whole positions (as first shipped)"
    )
    parser.add_argument("--quick", action="store_true", help="4 questions, 4 in flight, 4 tokens")
    args = parser.parse_args()
    if args.quick:
        args.questions, args.max_inflight, args.tokens = 4, 4, 4
    try:
        import psutil  # noqa: F401
    except ImportError:
        raise SystemExit("selfrag_memory: needs psutil to follow the process tree (pip install psutil)") from None
    if args.before is not None and not (Path(args.before) / "ragbench" / "__init__.py").is_file():
        raise SystemExit(f"selfrag_memory: --before {args.before} holds no ragbench package (pip install --target it)")
    before = (WHOLE, REPO) if args.before is None else (CUT, Path(args.before).resolve())
    engine = f"real vLLM on {args.model}" if args.model else "the vLLM-shaped stand-in"
    print(
        f"Self-RAG short form, {args.questions} PopQA questions, --max-inflight {args.max_inflight}, "
        f"{args.tokens} tokens, window 32,016 / 5,000, on {engine}:"
    )
    with tempfile.TemporaryDirectory() as work:
        whole = None if args.cut_only else report("whole", run_side(*before, args, Path(work) / "whole"))
        built = report("built", run_side(BUILT, REPO, args, Path(work) / "built")) if args.built_cut else None
        cut = report("cut", run_side(CUT, REPO, args, Path(work) / "cut"))
    if built is not None:
        assert built["samples"] == cut["samples"], "making only the entries read changed Self-RAG's outputs"
    if whole is None:
        return
    assert whole["samples"] == cut["samples"], "cutting vLLM's positions changed Self-RAG's outputs"
    print(
        f"  whole / cut examples' time {whole['examples_s'] / cut['examples_s']:.2f}x"
        + (f", built / cut {built['examples_s'] / cut['examples_s']:.2f}x" if built else "")
    )
    print(
        f"  whole / cut tree peak {whole['tree_mb'] / cut['tree_mb']:.1f}x, ragbench alone "
        f"{whole['root_hwm_mb'] / cut['root_hwm_mb']:.1f}x; the whole side's positions held at most "
        f"{held_mb(args):.0f} MB by the structure (~{ENTRY_BYTES} bytes an entry); outputs identical"
    )
    # The peaks are RSS sampled every 50 ms: at --quick's 4 tokens the whole side holds its positions for less
    # than a sample may take to come round on a loaded machine, so only a full-size run stands behind the claim.
    if not args.quick:
        assert cut["tree_mb"] < whole["tree_mb"], "cutting vLLM's positions did not lower the peak"


if __name__ == "__main__":
    main()

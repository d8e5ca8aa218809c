"""Storage at scale: peak memory and bytes on disk per example of a CRAG Task 1 run, small and large.

Runs `ragbench --tasks crag_t1 --system vanilla --model scripted:echo` (an engine that answers
instantly, with a scripted CRAG judge) in a fresh process on synthetic Task 1 records in the
released schema (5 pages of ~6 kB of HTML each; a stand-in Llama-2 tokenizer and a hashing sentence embedder
stand in for Llama 2's and MiniLM, so the run is harness cost only) with few and with many
examples, and prints per run: wall time, the process's peak RSS, and the run folder's bytes per
example (samples, calls/, judge log, cache). Peak RSS must not grow with the number of examples.

`--before PYTHON` runs the same with another ragbench's interpreter (e.g. a virtualenv of an
older checkout) first, for a before/after comparison in one run.

Run: python benchmarks/storage_scale.py [--small 100] [--large 2000] [--before PYTHON] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ragbench.tasks.crag.synthetic import standin_tokenizer

HERE = Path(__file__).resolve().parent
WORDS = (
    "the team won league season player city company price market year album song film director "
    "record revenue stock growth report history music award best new artist released"
).split()


class HashEmbedder:
    """A stand-in for MiniLM (`--task-arg embedder=storage_scale:HashEmbedder`): hashed words."""

    def encode(self, texts):
        import zlib

        import numpy as np

        vectors = np.zeros((len(texts), 64))
        for row, text in enumerate(texts):
            for word in text.lower().split():
                vectors[row, zlib.crc32(word.encode()) % 64] += 1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)


def page(rng: random.Random, paragraphs: int = 12) -> str:
    body = "".join(
        "<div><p>"
        + " ".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))).capitalize() + "." for _ in range(5))
        + "</p></div>\n"
        for _ in range(paragraphs)
    )
    return f"<html><head><title>t</title></head><body>{body}</body></html>"


def write_records(path: Path, count: int) -> None:
    rng = random.Random(0)
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            record = {
                "interaction_id": f"id-{i}",
                "query_time": "03/01/2024, 10:00:00 PT",
                "domain": "finance",
                "question_type": "simple",
                "static_or_dynamic": "static",
                "query": f"what did team {i} win?",
                "answer": f"league {i}",
                "alt_ans": [],
                "split": 1,
                "search_results": [
                    {
                        "page_name": f"P{i}.{j}",
                        "page_url": f"https://example.org/{i}/{j}",
                        "page_snippet": "snippet",
                        "page_result": page(rng),
                        "page_last_modified": "",
                    }
                    for j in range(5)
                ],
            }
            handle.write(json.dumps(record) + "\n")


def folder_bytes(folder: Path) -> dict[str, int]:
    parts = {"samples": 0, "calls": 0, "judge/nli logs": 0, "cache": 0, "other": 0}
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        relative = path.relative_to(folder).parts
        part = (
            "samples"
            if relative[0] == "samples"
            else "calls"
            if relative[0] == "calls"
            else "cache"
            if path.name.startswith("cache.sqlite")
            else "judge/nli logs"
            if path.name.endswith("_calls.jsonl")
            else "other"
        )
        parts[part] += path.stat().st_size
    return parts


def measure(
    label: str, python: str, work: Path, data: Path, count: int, tokenizer: str, judge: Path, here: bool = False
) -> dict:
    """One run in a fresh process of `python`, or (`here`: the quick mode, no peak taken: this process's is
    printed) in this process."""
    out = work / f"run_{label}_{count}"
    command = [
        python,
        "-m",
        "ragbench._cli.main",
        "--tasks",
        "crag_t1",
        "--system",
        "vanilla",
        "--model",
        "scripted:echo",
        "--judge",
        f"scripted:{judge}",
        "--data",
        f"crag_t1={data}",
        "--limit",
        str(count),
        "--task-arg",
        f"tokenizer={tokenizer}",
        "--task-arg",
        "embedder=storage_scale:HashEmbedder",
        "--task-arg",
        "page_executor=thread",
        "--task-arg",
        "split=all",
        "--output",
        str(out),
        "--no-progress",
        "--bootstrap-iters",
        "100",
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}
    started = time.perf_counter()
    if here:
        sys.path.insert(0, str(HERE / "support"))  # a folder, not a package
        from command_here import ragbench_here

        code, stderr = ragbench_here(command[3:], env, str(work))  # after `PYTHON -m ragbench._cli.main`
        usage = resource.getrusage(resource.RUSAGE_SELF)
    else:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=work)
        _, status, usage = os.wait4(process.pid, 0)
        code, stderr = os.waitstatus_to_exitcode(status), process.stderr.read().decode() if process.stderr else ""
    wall = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"run of {count} examples failed ({python}):\n{stderr[-2000:]}")
    parts = folder_bytes(out)
    return {
        "examples": count,
        "wall_s": wall,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "bytes_per_example": {k: v / count for k, v in parts.items()},
        "total_per_example": sum(parts.values()) / count,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=2000)
    parser.add_argument("--before", default=None, help="the python of another ragbench checkout, measured first")
    parser.add_argument(
        "--quick", action="store_true", help="5 and 20 examples, this ragbench's runs in this process (no peak taken)"
    )
    args = parser.parse_args()
    if args.quick:
        args.small, args.large = 5, 20
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        data = work / "crag_t1.jsonl"
        write_records(data, args.large)
        tokenizer = str(standin_tokenizer(work / "tokenizer"))
        judge = work / "judge.json"
        judge.write_text(json.dumps([{"response": '{"accuracy": false}'}]))
        print(
            f"CRAG Task 1, vanilla, scripted:echo; {data.stat().st_size / args.large / 1000:.1f} kB of data "
            f"per example (5 pages)"
        )
        versions = ([("before", args.before)] if args.before else []) + [("this", sys.executable)]
        header = (
            f"{'ragbench':<8} {'examples':>8} {'wall s':>7} {'peak RSS MB':>11} {'bytes/example':>13} "
            f"{'samples':>8} {'calls':>7} {'judge/nli':>9} {'cache':>7} {'other':>6}"
        )
        print(header)
        for label, python in versions:
            here = args.quick and label == "this"  # quick: this ragbench's runs in this process
            sizes = (args.small, args.large)
            rows = [measure(label, python, work, data, count, tokenizer, judge, here) for count in sizes]
            for row in rows:
                parts = row["bytes_per_example"]
                print(
                    f"{label:<8} {row['examples']:>8} {row['wall_s']:>7.1f} {row['peak_rss_mb']:>11.0f} "
                    f"{row['total_per_example']:>13.0f} {parts['samples']:>8.0f} {parts['calls']:>7.0f} "
                    f"{parts['judge/nli logs']:>9.0f} {parts['cache']:>7.0f} {parts['other']:>6.0f}"
                )
            print(
                f"{label:<8} peak RSS {rows[1]['examples']} / {rows[0]['examples']} examples: "
                f"{rows[1]['peak_rss_mb'] / rows[0]['peak_rss_mb']:.2f}x"
            )


if __name__ == "__main__":
    main()

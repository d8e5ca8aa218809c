"""`ragbench view`'s index of a large samples file: the time and memory of one pass over it.

Writes N PopQA-sized sample lines as a vanilla run on the scripted engine writes them (`sample_line`: the
question, gold, three slice fields, one document shown, a retrieval and an LLM step, one score; about 1.6 kB
a line), then, each in a fresh process: indexes the file (`SampleIndex.refresh`, the viewer's first rows
request: every line read and checked as a `SampleRecord`, a table row and the line's offset kept) and
reads 20 records again by their offsets (an example's page). Prints the CPU seconds of the pass (the
process's own, which other jobs on a shared machine disturb less than wall time), the process's peak RSS,
and in a third process what tracemalloc counts: the bytes the index holds after the pass, and its peak.

`--before DIR`: the same with the ragbench package found in DIR first on the path (an older checkout, e.g.
`git archive COMMIT ragbench | tar -x -C DIR`), run first, for a before/after comparison in one go.

Run: python benchmarks/view_index.py [--examples 20000] [--before DIR] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MEASURE = """
import json, resource, sys, time, tracemalloc
from pathlib import Path
from ragbench._view.runs import SampleIndex
traced = sys.argv[2] == "traced"
if traced:
    tracemalloc.start()
started = time.process_time()
index = SampleIndex(Path(sys.argv[1])).refresh()
seconds = time.process_time() - started
held, peak = tracemalloc.get_traced_memory() if traced else (0, 0)
started = time.process_time()
step = max(1, len(index.rows) // 20)
reads = range(0, len(index.rows), step)
for n in reads:
    index.record(n)
print(json.dumps({"rows": len(index.rows), "cpu_s": seconds, "held_mb": held / 1e6, "peak_mb": peak / 1e6,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3,
                  "record_ms": (time.process_time() - started) / len(reads) * 1e3}))
"""


def write_samples(path: Path, examples: int) -> None:
    from ragbench._records import SampleRecord, sample_line
    from ragbench._storage.jsonl import dumps
    from ragbench._types import Document, Step

    props = ("occupation", "genre", "country")
    with path.open("w", encoding="utf-8") as handle:
        for i in range(examples):
            question = f"Who is person {i}?"
            doc = Document(id=f"{i}0", title=f"P{i}", text=f"Person {i} is a poet. " * 4)
            prompt = f"Below is an instruction that describes a task.\n\n### Paragraph:\n[1] {doc.text}\n\n{question}"
            record = SampleRecord(
                id=str(i),
                index=i,
                question=question,
                gold={"answers": [f"person {i}"]},
                gold_references=[f"person {i}"],
                meta={"prop": props[i % 3], "pop": 10 * (i % 97), "s_wiki_title": f"P{i}"},
                answer=f"person {i}" if i % 2 else "nobody",
                output=f"person {i}" if i % 2 else "nobody",
                docs=[doc],
                trace=[
                    Step(
                        "retrieval", "retrieve", {"retriever": "provided", "query": question, "k": 1}, {"ids": [doc.id]}
                    ),
                    Step("llm", "answer", {"prompt": prompt}, {"texts": ["nobody"], "finish_reason": "stop"}),
                ],
                scores={"match": float(i % 2)},
                seconds=0.01,
            )
            handle.write(dumps(sample_line(record)) + "\n")


def measure(path: Path, first_on_path: str | None, traced: bool) -> dict:
    env = dict(os.environ)
    if first_on_path:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [first_on_path, env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path), "traced" if traced else "plain"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=tempfile.gettempdir(),  # not the checkout: `first_on_path` decides which ragbench is imported
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=20_000)
    parser.add_argument("--before", help="a folder holding an older ragbench package, measured first")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="200 samples, one run")
    args = parser.parse_args()
    if args.quick:
        args.examples, args.repeat = 200, 1
    here = str(Path(__file__).resolve().parent.parent)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "samples.jsonl"
        write_samples(path, args.examples)
        print(f"{args.examples} sample lines, {path.stat().st_size / 1e6:.1f} MB")
        print(
            "| ragbench | index CPU s (best of runs) | record read ms | peak RSS MB | index holds MB | traced peak MB |"
        )
        print("|---|---:|---:|---:|---:|---:|")
        for name, first in ([("before", args.before)] if args.before else []) + [("this checkout", here)]:
            plain = [measure(path, first, traced=False) for _ in range(args.repeat)]
            traced = measure(path, first, traced=True)
            best = min(plain, key=lambda m: m["cpu_s"])
            runs = ", ".join(f"{m['cpu_s']:.2f}" for m in plain)
            print(
                f"| {name} | {best['cpu_s']:.3f} ({runs}) | "
                f"{best['record_ms']:.3f} | {max(m['rss_mb'] for m in plain):.1f} | {traced['held_mb']:.1f} | "
                f"{traced['peak_mb']:.1f} |"
            )


if __name__ == "__main__":
    main()

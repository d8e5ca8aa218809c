"""YAML tasks: what reading a local JSONL through Hugging Face `datasets` would cost, against ragbench's
own reader (the choice in ragbench/_yaml_tasks/sources.py), and the field mapping's rate.

Each figure is a fresh process (as a user's `ragbench` command is; `--quick`: in this process, a check that the
script runs), on FlashRAG-format records with 5 passages each:

  check direct     `ragbench check --tasks t.yaml --no-model`: start-up, the pre-flight, first records
  check parquet    the same task over the same records as Parquet, read through `datasets`
  read direct      every record mapped to an Example by the YAML task (its reader and field mapping)
  read datasets    every record through `datasets.load_dataset("json")` (import, Arrow cache), no mapping
  json floor       json.loads of every line, nothing else

Run: python benchmarks/yaml_task_load.py [--records 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASK = """task: bench
data: {path: DATA}
fields:
  gold: {answers: golden_answers}
  documents: {path: metadata.passages}
  slices: {type: metadata.type}
prompt: {template: "{% for doc in docs %}{{ doc.title }}: {{ doc.text }}\\n{% endfor %}Q: {{ question }}"}
metrics: [em, f1]
"""
READ_DIRECT = """
import sys
from pathlib import Path
from ragbench._yaml_tasks import task_class
from ragbench._yaml_tasks.spec import load_spec
task = task_class(load_spec(Path(sys.argv[1])))()
print(sum(1 for _ in task.examples()))
"""
READ_DATASETS = """
import sys, datasets
datasets.disable_progress_bars()
print(len(list(datasets.load_dataset("json", data_files=sys.argv[1], split="train", cache_dir=sys.argv[2]))))
"""
JSON_FLOOR = """
import json, sys
print(sum(1 for line in open(sys.argv[1], encoding="utf-8") if json.loads(line)))
"""


def write_records(path: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    words = "the river city film album capital population wrote founded located country novel".split()
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            passages = [
                {"title": rng.choice(words).title(), "text": " ".join(rng.choices(words, k=90))} for _ in range(5)
            ]
            handle.write(
                json.dumps(
                    {
                        "id": f"dev_{i}",
                        "question": " ".join(rng.choices(words, k=9)) + "?",
                        "golden_answers": [rng.choice(words)],
                        "metadata": {"type": rng.choice(["bridge", "comparison"]), "passages": passages},
                    }
                )
                + "\n"
            )


def timed(args: list[str], env: dict[str, str], here: bool = False) -> float:
    """Seconds of `args` (`PYTHON -m ragbench._cli.main ...` or `PYTHON -c CODE ...`) in a fresh process, or
    (`here`: the quick mode, the script's run checked, not a fresh process's seconds) in this process."""
    started = time.perf_counter()
    status, error = in_this_process(args, env) if here else fresh(args, env)
    seconds = time.perf_counter() - started
    if status != 0:
        sys.exit(f"{' '.join(args[:4])} failed:\n{error[-2000:]}")
    return seconds


def fresh(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run(args, capture_output=True, text=True, env=env)
    return done.returncode, done.stderr


def in_this_process(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))  # a folder, not a package
    from command_here import python_here

    status, _, error = python_here(args, env)
    return status, error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, the fastest reported")
    parser.add_argument("--quick", action="store_true", help="50 records, one run each, in this process (CI)")
    args = parser.parse_args()
    if args.quick:
        args.records, args.repeat = 50, 1
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    with tempfile.TemporaryDirectory(prefix="ragbench-yaml-") as tmp:
        folder = Path(tmp)
        data = folder / "dev.jsonl"
        write_records(data, args.records, seed=0)
        (folder / "direct.yaml").write_text(TASK.replace("DATA", str(data)), encoding="utf-8")
        import datasets  # the Parquet copy of the same records (made here, not timed)

        datasets.disable_progress_bars()
        datasets.load_dataset("json", data_files=str(data), split="train", cache_dir=str(folder / "prep")).to_parquet(
            str(folder / "dev.parquet")
        )
        (folder / "parquet.yaml").write_text(TASK.replace("DATA", str(folder / "dev.parquet")), encoding="utf-8")
        py, rows, here = sys.executable, [], args.quick
        check = [py, "-m", "ragbench._cli.main", "check", "--model", "scripted:echo", "--no-model", "--tasks"]
        figures = {
            "check direct": lambda i: timed([*check, str(folder / "direct.yaml")], env, here),
            "check parquet": lambda i: timed([*check, str(folder / "parquet.yaml")], env, here),
            "read direct": lambda i: timed([py, "-c", READ_DIRECT, str(folder / "direct.yaml")], env, here),
            "read datasets": lambda i: timed(
                [py, "-c", READ_DATASETS, str(data), str(folder / f"cache{i}")], env, here
            ),
            "json floor": lambda i: timed([py, "-c", JSON_FLOOR, str(data)], env, here),
        }
        best = {name: min(run(i) for i in range(args.repeat)) for name, run in figures.items()}
    print(
        f"{args.records} FlashRAG-format records, 5 passages each ({data.name}); fastest of {args.repeat}, "
        f"{'in this process (quick)' if args.quick else 'fresh processes'}\n"
    )
    print("| what | seconds |\n|---|---:|")
    for name, seconds in best.items():
        rows.append(f"| {name} | {seconds:.2f} |")
    print("\n".join(rows))
    print(
        f"\ncheck parquet / check direct: {best['check parquet'] / best['check direct']:.2f}x; "
        f"read datasets / read direct: {best['read datasets'] / best['read direct']:.2f}x; "
        f"read direct / json floor: {best['read direct'] / best['json floor']:.2f}x"
    )


if __name__ == "__main__":
    main()

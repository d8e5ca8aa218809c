"""BrowseComp-Plus's `openai_client` (texttron/BrowseComp-Plus search_agent/openai_client.py, run unchanged from
the checkout named, with its own thread pool, `--num-threads`) against ragbench's `search_agent` (the `openai`
engine, `concurrency` the same number), over the same questions against the same simulated OpenAI-compatible
server on 127.0.0.1: tests/support/search_agent_fake.py's agent (search the question, get_document of the first hit,
answer), each answer costing a fixed delay (overlapping other requests) and, where given, `per_request +
per_token x output tokens` on one simulated device.

Each side is timed from inside its agent loop, on the server's clock: from its first request arriving to its
last answer sent (start-up, imports and writing results left out), and, beside that, as a whole process. For
each concurrency the two sides run in turn, `--repeats` times each, and the best of each side counts (the
machine is shared: noise only slows a run down). Prints the machine and its load average, the settings, each
side's seconds and the ratios theirs / ours (>= 1: ragbench is not slower).

Both sides search alike: ragbench with its BM25 over fictional_multihop's corpus, the client with a searcher
answering the hits ragbench's run got for the same queries (tests/data/search_agent/record_upstream.py's; their
own BM25 needs pyserini and Java). Each side runs once before any timing (imports, the BM25 index).

    python -m venv /tmp/bcp && /tmp/bcp/bin/pip install openai==1.97.0 rich tqdm transformers python-dotenv
    python benchmarks/agent_speed.py BROWSECOMP_PLUS_CHECKOUT --python /tmp/bcp/bin/python
        [--concurrency 1 4 16] [--queries-per-slot 4] [--min-queries 16] [--repeats 3] [--delay 0.2]
        [--per-request 0] [--per-token 0]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
FIXTURES = TESTS / "data" / "search_agent"
QUESTIONS = ROOT / "tasks" / "fictional_multihop" / "data" / "questions.jsonl"
TASK = "fictional_multihop"
CLIENT = r"""
import sys
from pathlib import Path
checkout, fixtures, tests, *argv = sys.argv[1:]
sys.path[:0] = [fixtures, tests]
import record_upstream
sys.argv = ["openai_client", *argv]
record_upstream.runpy_main(Path(checkout), "openai_client")
"""

sys.path.insert(0, str(TESTS))
from support.search_agent_fake import FakeAgentServer  # noqa: E402


def questions(count: int) -> list[dict[str, Any]]:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()[:count]
    return [json.loads(line) for line in lines]


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode:
        sys.exit(f"{command[:4]} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return seconds


@dataclass
class Run:
    """One side's timed run: whole-process seconds, the span of its requests on the server's clock."""

    process: float
    loop: float
    requests: int


def run_timed(server: FakeAgentServer, command: list[str], env: dict[str, str]) -> Run:
    """Run `command` (one side), timing it as a process and from the server's first request to its last answer."""
    before = len(server.served)
    process = timed(command, env)
    served = server.served[before:]
    if not served:
        sys.exit(f"{command[:4]} sent the server no request")
    loop = max(sent for _, sent in served) - min(arrived for arrived, _ in served)
    return Run(process, loop, len(served))


def ragbench_run(
    work: Path, name: str, count: int, concurrency: int, server: FakeAgentServer
) -> tuple[Run, list[dict]]:
    """search_agent over the first `count` questions: its run, and its samples."""
    folder = work / name
    command = [sys.executable, "-m", "ragbench", "--tasks", TASK, "--system", "search_agent", "--limit", str(count)]
    command += ["--model", "openai:agent", "--base-url", server.base_url, "--output", str(folder), "--no-progress"]
    command += ["--model-arg", f"concurrency={concurrency}"]
    for option in ("get_document=true", "snippet_max_tokens=0", "temperature=0", "top_p=1"):
        command += ["--system-arg", option]
    run = run_timed(server, command, os.environ | {"OPENAI_API_KEY": "EMPTY"})
    lines = (folder / "samples" / f"{TASK}.jsonl").read_text(encoding="utf-8").splitlines()
    return run, [json.loads(line) for line in lines]


def hits_of(samples: list[dict]) -> dict[str, list[dict[str, Any]]]:
    """query -> the hits ragbench's search answered it with (docid, score), for the client's searcher."""
    hits: dict[str, list[dict[str, Any]]] = {}
    for sample in samples:
        for item in sample["prediction"]["extras"]["result"]:
            if item["type"] == "tool_call" and item["tool_name"] == "search" and item["output"]:
                found = json.loads(item["output"])
                hits[json.loads(item["arguments"])["query"]] = [
                    {"docid": h["docid"], "score": h["score"]} for h in found
                ]
    return hits


def client_run(
    work: Path, name: str, count: int, concurrency: int, args: argparse.Namespace, server: FakeAgentServer
) -> Run:
    """openai_client over the first `count` questions with `concurrency` threads (its run files in work/name)."""
    queries = work / f"{name}.tsv"
    queries.write_text("".join(f"{q['id']}\t{q['question']}\n" for q in questions(count)), encoding="utf-8")
    argv = ["--query", str(queries), "--output-dir", str(work / name), "--searcher-type", "ragbench"]
    argv += ["--hits", str(work / "hits.json"), "--model", "agent", "--get-document", "--query-template"]
    argv += ["QUERY_TEMPLATE", "--temperature", "0", "--top_p", "1", "--snippet-max-tokens", "0"]
    argv += ["--num-threads", str(concurrency)]
    env = os.environ | {"OPENAI_API_KEY": "EMPTY", "OPENAI_BASE_URL": server.base_url, "HF_HUB_OFFLINE": "1"}
    return run_timed(server, [args.python, "-c", CLIENT, str(args.checkout), str(FIXTURES), str(TESTS), *argv], env)


def same_answers(samples: list[dict], folder: Path) -> int:
    """How many queries both sides answered with the same text (all of them, when both did the same work)."""
    theirs = {}
    for path in folder.glob("run_*.json"):
        run = json.loads(path.read_text(encoding="utf-8"))
        texts = [item["output"] for item in run["result"] if item["type"] == "output_text"]
        theirs[run["query_id"]] = texts[-1] if texts else ""
    return sum(theirs.get(sample["id"]) == sample["prediction"]["answer"] for sample in samples)


def best(runs: list[Run]) -> Run:
    """The fastest run from inside the loop (on a shared machine noise only slows a run down)."""
    return min(runs, key=lambda run: run.loop)


@dataclass
class Row:
    """One concurrency's result: the best run of each side, and how many final answers agreed (in the run that
    agreed least)."""

    concurrency: int
    queries: int
    ours: Run
    theirs: Run | None
    same: int


def measured_at(work: Path, concurrency: int, args: argparse.Namespace, server: FakeAgentServer) -> Row:
    """Both sides in turn, `args.repeats` times each, at `concurrency`; the client only where a checkout was named."""
    count = max(args.min_queries, args.queries_per_slot * concurrency)
    ours: list[Run] = []
    theirs: list[Run] = []
    agreed: list[int] = []
    for repeat in range(args.repeats):
        name = f"c{concurrency}_{repeat}"
        run, samples = ragbench_run(work, f"ragbench_{name}", count, concurrency, server)
        ours.append(run)
        if not (work / "hits.json").is_file():  # --quick: no warm run came first (its one count is this run's)
            (work / "hits.json").write_text(json.dumps(hits_of(samples)), encoding="utf-8")
        if args.checkout is not None:
            theirs.append(client_run(work, f"client_{name}", count, concurrency, args, server))
            agreed.append(same_answers(samples, work / f"client_{name}"))
    return Row(concurrency, count, best(ours), best(theirs) if theirs else None, min(agreed, default=0))


def warmed(work: Path, args: argparse.Namespace, server: FakeAgentServer) -> None:
    """Each side run once untimed (imports, the BM25 index); the client's searcher gets ragbench's hits for every
    question any timed run asks. --quick: none (its figures are not kept; the timed run writes the hits)."""
    if args.quick:
        return
    count = max(max(args.min_queries, args.queries_per_slot * c) for c in args.concurrency)
    _, samples = ragbench_run(work, "warm_ragbench", count, max(args.concurrency), server)
    (work / "hits.json").write_text(json.dumps(hits_of(samples)), encoding="utf-8")
    if args.checkout is not None:
        client_run(work, "warm_client", 2, 2, args, server)


def report(rows: list[Row], args: argparse.Namespace) -> None:
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"load average after the runs (1, 5, 15 min): {load}")
    print(
        f"server: {args.delay} s delay a request, then {args.per_request} s + {args.per_token} s an output token "
        f"on one simulated device; fictional_multihop questions; best of {args.repeats} a side; the client's "
        "--num-threads and ragbench's openai engine's concurrency equal"
    )
    print("seconds: 'loop' = first request arriving to last answer sent (server's clock); 'process' = whole process")
    header = f"{'concurrency':>11}{'queries':>8}{'requests':>9}{'theirs loop':>12}{'ours loop':>10}{'ratio':>7}"
    print(header + f"{'theirs process':>15}{'ours process':>13}{'ratio':>7}{'same answers':>13}")
    for row in rows:
        ours, theirs = row.ours, row.theirs
        line = f"{row.concurrency:>11}{row.queries:>8}{ours.requests:>9}"
        if theirs is None:
            print(line + f"{'-':>12}{ours.loop:>10.2f}{'-':>7}{'-':>15}{ours.process:>13.2f}{'-':>7}{'-':>13}")
            continue
        line += f"{theirs.loop:>12.2f}{ours.loop:>10.2f}{theirs.loop / ours.loop:>7.2f}"
        print(line + f"{theirs.process:>15.2f}{ours.process:>13.2f}{theirs.process / ours.process:>7.2f}", end="")
        print(f"{row.same:>6} of {row.queries}")
    if rows and rows[0].theirs is None:
        print("openai_client not run: name a BrowseComp-Plus checkout")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, nargs="?", help="a BrowseComp-Plus checkout (search_agent/, searcher/)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter with the client's packages")
    parser.add_argument(
        "--concurrency", type=int, nargs="+", default=[1, 4, 16], help="the client's --num-threads and ragbench's"
    )
    parser.add_argument("--queries-per-slot", type=int, default=4, help="questions = this x concurrency ...")
    parser.add_argument("--min-queries", type=int, default=16, help="... or at least this many")
    parser.add_argument("--repeats", type=int, default=3, help="runs a side at each concurrency; the best counts")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds every request waits, overlapping")
    parser.add_argument("--per-request", type=float, default=0.0, help="device seconds a request")
    parser.add_argument("--per-token", type=float, default=0.0, help="device seconds an output token")
    parser.add_argument("--quick", action="store_true", help="2 queries, concurrency 2, once, 0.01 s delay")
    args = parser.parse_args()
    if args.quick:
        args.concurrency, args.queries_per_slot, args.min_queries, args.repeats, args.delay = [2], 1, 2, 1, 0.01
    elif args.checkout is None:
        parser.error("name a BrowseComp-Plus checkout (only --quick runs ragbench's side alone)")
    server = FakeAgentServer(args.delay, args.per_request, args.per_token)
    try:
        with tempfile.TemporaryDirectory(prefix="agent_speed_") as folder:
            warmed(Path(folder), args, server)
            rows = [measured_at(Path(folder), concurrency, args, server) for concurrency in args.concurrency]
    finally:
        server.stop()
    report(rows, args)


if __name__ == "__main__":
    main()

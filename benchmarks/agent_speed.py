"""Wall-clock of BrowseComp-Plus's `openai_client` (texttron/BrowseComp-Plus search_agent/openai_client.py, run
unchanged from the checkout named, with its own thread pool, `--num-threads`, 10 as its README runs it) and of
ragbench's `search_agent` (the `openai` engine, its defaults) over the same questions against the same simulated
OpenAI-compatible server on 127.0.0.1: tests/search_agent_fake.py's agent (search the question, get_document
of the first hit, answer), each answer costing a per-request delay (overlapping other requests) and then
`per_request + per_token x output tokens` on one simulated device. Prints the machine, the settings, each side's
seconds and requests, and the ratio theirs / ours (>= 1: ragbench is not slower).

Both sides search alike: ragbench with its BM25 over fictional_multihop's corpus, the client with a searcher
answering the hits ragbench's run got for the same queries (tests/data/search_agent/record_upstream.py's; their
own BM25 needs pyserini and Java). Each side runs once on two questions first (imports, the BM25 index), then
timed as a whole process: start-up included.

    python -m venv /tmp/bcp && /tmp/bcp/bin/pip install openai==1.97.0 rich tqdm transformers python-dotenv
    python benchmarks/agent_speed.py BROWSECOMP_PLUS_CHECKOUT --python /tmp/bcp/bin/python [--queries 100]
        [--threads 10] [--concurrency N] [--delay 0.5] [--per-request 0.005] [--per-token 0.001]
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
from search_agent_fake import FakeAgentServer  # noqa: E402


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


def ragbench_run(
    work: Path, name: str, count: int, args: argparse.Namespace, server: FakeAgentServer
) -> tuple[float, list[dict]]:
    """search_agent over the first `count` questions: seconds, and its samples."""
    folder = work / name
    command = [sys.executable, "-m", "ragbench", "--tasks", TASK, "--system", "search_agent", "--limit", str(count)]
    command += ["--model", "openai:agent", "--base-url", server.base_url, "--output", str(folder), "--no-progress"]
    command += ["--model-arg", f"concurrency={args.concurrency}"] if args.concurrency else []
    for option in ("get_document=true", "snippet_max_tokens=0", "temperature=0", "top_p=1"):
        command += ["--system-arg", option]
    seconds = timed(command, os.environ | {"OPENAI_API_KEY": "EMPTY"})
    lines = (folder / "samples" / f"{TASK}.jsonl").read_text(encoding="utf-8").splitlines()
    return seconds, [json.loads(line) for line in lines]


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


def client_run(work: Path, name: str, count: int, args: argparse.Namespace, server: FakeAgentServer) -> float:
    """openai_client over the first `count` questions: seconds (its run files in work/name)."""
    queries = work / f"{name}.tsv"
    queries.write_text("".join(f"{q['id']}\t{q['question']}\n" for q in questions(count)), encoding="utf-8")
    argv = ["--query", str(queries), "--output-dir", str(work / name), "--searcher-type", "ragbench"]
    argv += ["--hits", str(work / "hits.json"), "--model", "agent", "--get-document", "--query-template"]
    argv += ["QUERY_TEMPLATE", "--temperature", "0", "--top_p", "1", "--snippet-max-tokens", "0"]
    argv += ["--num-threads", str(args.threads)]
    env = os.environ | {"OPENAI_API_KEY": "EMPTY", "OPENAI_BASE_URL": server.base_url, "HF_HUB_OFFLINE": "1"}
    return timed([args.python, "-c", CLIENT, str(args.checkout), str(FIXTURES), str(TESTS), *argv], env)


def same_answers(samples: list[dict], folder: Path) -> int:
    """How many queries both sides answered with the same text (all of them, when both did the same work)."""
    theirs = {}
    for path in folder.glob("run_*.json"):
        run = json.loads(path.read_text(encoding="utf-8"))
        texts = [item["output"] for item in run["result"] if item["type"] == "output_text"]
        theirs[run["query_id"]] = texts[-1] if texts else ""
    return sum(theirs.get(sample["id"]) == sample["prediction"]["answer"] for sample in samples)


def measured(work: Path, args: argparse.Namespace, server: FakeAgentServer) -> dict[str, Any]:
    """Each side warmed up on two questions, then timed; the client only where a checkout was named."""
    ragbench_run(work, "warm_ragbench", 2, args, server)
    before, busy = len(server.requests), server.device_seconds
    ours, samples = ragbench_run(work, "ragbench", args.queries, args, server)
    found: dict[str, Any] = {"ours": ours, "our_requests": len(server.requests) - before, "samples": samples}
    found["our_device"] = server.device_seconds - busy
    if args.checkout is None:
        return found
    (work / "hits.json").write_text(json.dumps(hits_of(samples)), encoding="utf-8")
    client_run(work, "warm_client", 2, args, server)
    before, busy = len(server.requests), server.device_seconds
    found["theirs"] = client_run(work, "client", args.queries, args, server)
    found["their_requests"] = len(server.requests) - before
    found["their_device"] = server.device_seconds - busy
    found["same"] = same_answers(samples, work / "client")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, nargs="?", help="a BrowseComp-Plus checkout (search_agent/, searcher/)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter with the client's packages")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--threads", type=int, default=10, help="the client's --num-threads")
    parser.add_argument("--concurrency", type=int, help="ragbench's openai engine's (default: its default, 16)")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds every request waits, overlapping")
    parser.add_argument("--per-request", type=float, default=0.005, help="device seconds a request")
    parser.add_argument("--per-token", type=float, default=0.001, help="device seconds an output token")
    parser.add_argument(
        "--quick", action="store_true", help="4 queries, 0.05 s delay; the client if a checkout is named"
    )
    args = parser.parse_args()
    if args.quick:
        args.queries, args.delay = 4, 0.05
    elif args.checkout is None:
        parser.error("name a BrowseComp-Plus checkout (only --quick runs ragbench's side alone)")
    server = FakeAgentServer(args.delay, args.per_request, args.per_token)
    try:
        with tempfile.TemporaryDirectory(prefix="agent_speed_") as folder:
            found = measured(Path(folder), args, server)
    finally:
        server.stop()
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(
        f"server: {args.delay} s delay a request, then {args.per_request} s + {args.per_token} s an output token "
        f"on one simulated device; {args.queries} queries (fictional_multihop), the client with "
        f"--num-threads {args.threads}, ragbench's openai engine with concurrency "
        f"{args.concurrency or 'as its default (16)'}"
    )
    print(f"{'side':<28}{'seconds':>10}{'requests':>10}{'device busy, s':>16}")
    if "theirs" in found:
        print(f"{'openai_client (theirs)':<28}{found['theirs']:>10.2f}{found['their_requests']:>10}", end="")
        print(f"{found['their_device']:>16.2f}")
    print(
        f"{'search_agent (ragbench)':<28}{found['ours']:>10.2f}{found['our_requests']:>10}{found['our_device']:>16.2f}"
    )
    if "theirs" in found:
        print(f"same final answers: {found['same']} of {len(found['samples'])}")
        print(f"ratio theirs / ours: {found['theirs'] / found['ours']:.2f}")
    else:
        print("openai_client not run: name a BrowseComp-Plus checkout")


if __name__ == "__main__":
    main()

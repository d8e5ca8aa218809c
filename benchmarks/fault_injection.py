"""A whole run against an OpenAI-compatible server that fails often: 30% of requests get a fault (HTTP 429,
HTTP 500, a 5 s hang past the client's timeout, HTTP 200 with a non-JSON body, a dropped connection).
The run must end complete: every example scored, none lost. Loopback only; the server stops with the run.
Then one request to a port nobody listens on, with the engine's default retries: how long until it fails.

    python benchmarks/fault_injection.py            # 100 examples, 30% faults
    python benchmarks/fault_injection.py --quick    # 30 examples
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "engines"))  # test_engine_openai

from test_engine_openai import FakeServer

from ragbench._engines.hosted.openai import OpenAIEngine
from ragbench._registry import installed_registry
from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench._values.engine_errors import EngineError
from ragbench._values.llm_request import Request

FAULTS = [
    ("429", {"status": 429, "body": {"error": {"message": "rate limited"}}, "headers": {"Retry-After": "0"}}),
    ("500", {"status": 500, "body": {"error": {"message": "internal error"}}}),
    ("hang 5 s", {"hang": 5}),
    ("200 not JSON", {"status": 200, "body": b"<html>502 Bad Gateway</html>"}),
    ("dropped connection", {"drop": True}),
]


def unreachable() -> tuple[float, str]:
    """Seconds until one request to a refused port fails (engine defaults), and its message."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    engine = OpenAIEngine("fake", base_url=url)

    async def ask() -> str:
        try:
            await engine.agenerate_one(Request(prompt="hi"))
            return "answered?"
        except EngineError as exc:
            return str(exc)
        finally:
            await engine.aclose()

    started = time.perf_counter()
    message = asyncio.run(ask())
    return time.perf_counter() - started, message


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--fault-rate", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="30 examples")
    args = parser.parse_args()
    if args.quick:
        args.examples = 30
    rng = random.Random(args.seed)
    server = FakeServer()
    script = []  # (fault name or None, action), one per request the server will receive, in order
    for _ in range(args.examples * 4):  # enough for every attempt
        fault = rng.choice(FAULTS) if rng.random() < args.fault_rate else (None, {})
        script.append(fault)
    server.then(*(action for _, action in script))
    with tempfile.TemporaryDirectory(prefix="ragbench-faults-") as tmp:
        data = Path(tmp) / "popqa.jsonl"
        data.write_text(
            "".join(
                json.dumps(
                    {
                        "id": i,
                        "question": f"Who is person {i}?",
                        "answers": [f"person {i}"],
                        "ctxs": [{"title": "T", "text": "x"}],
                    }
                )
                + "\n"
                for i in range(args.examples)
            )
        )
        started = time.perf_counter()
        try:
            results = (
                Evaluator(
                    RunConfig.of(
                        tasks=["popqa"],
                        system="closed_book",
                        model="openai:fake",
                        data={"popqa": str(data)},
                        model_args={
                            "base_url": server.base_url,
                            "timeout": 1.0,
                            "backoff_base": 0.05,
                            "backoff_max": 0.5,
                            "concurrency": 8,
                        },
                        output=str(Path(tmp) / "run"),
                        progress=False,
                    ),
                    registry=installed_registry(),
                )
                .run()
                .results
            )
        finally:
            server.stop()
        wall = time.perf_counter() - started
    counts = results["counts"]["popqa"]
    used = len(server.requests)
    hit = Counter(name for name, _ in script[:used] if name is not None)
    print(
        f"{args.examples} examples, fault rate {args.fault_rate:.0%}: {used} requests reached the server, "
        f"{sum(hit.values())} of them faulted ({', '.join(f'{n} {name}' for name, n in sorted(hit.items()))})"
    )
    print(
        f"scored {counts['scored']}/{counts['records']}, failed {counts['failed']}, missing {counts['missing']}, "
        f"complete {results['complete']}, {wall:.1f} s"
    )
    seconds, message = unreachable()
    print(f"unreachable base URL: failed after {seconds:.2f} s: {message}")
    if not results["complete"]:
        sys.exit(1)


if __name__ == "__main__":
    main()

"""Start-up cost of one command: seconds from the process's start to the first LLM call of
`ragbench --tasks demo --system vanilla --model scripted:...`, measured in-process (the scripted
engine's answer function notes the time of its first call), and the modules the process has
imported by then.

Run: python benchmarks/startup.py [--repeats 9]   (each repeat is a fresh Python process)

It prints the median wall and CPU seconds to the first call, the modules imported by then, and the time
plugin discovery and the lookup of one task take in a warm process (`Registry.discover()` +
`expand_tasks(["demo"])`, median of 21). On a shared machine the wall time moves with the load: compare
the CPU seconds and the discovery time.
"""

from __future__ import annotations

import time

STARTED, STARTED_CPU = time.perf_counter(), time.process_time()  # before the imports below: they are measured

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

FIRST_CALL: list[float] = []


def answer(request: Any) -> str:
    """The scripted engine's answer: the question back; the first call notes the time and the modules."""
    if not FIRST_CALL:
        FIRST_CALL.append(time.perf_counter() - STARTED)
        print(
            json.dumps(
                {"first_call_s": FIRST_CALL[0], "cpu_s": time.process_time() - STARTED_CPU, "modules": len(sys.modules)}
            ),
            file=sys.stderr,
        )
    from ragbench._engines.scripted import echo

    return echo(request)


def one_process(output: str) -> None:
    from ragbench._cli.main import main as command

    sys.modules.setdefault("startup", sys.modules["__main__"])
    command.main(
        [
            "--tasks",
            "demo",
            "--system",
            "vanilla",
            "--model",
            "scripted:startup:answer",
            "--limit",
            "1",
            "--output",
            output,
            "--no-progress",
        ],
        standalone_mode=False,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="one repeat")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        one_process(args.child)
        return
    here = Path(__file__).resolve().parent
    rows = []
    for _ in range(1 if args.quick else args.repeats):
        with tempfile.TemporaryDirectory() as folder:
            done = subprocess.run(
                [sys.executable, str(here / "startup.py"), "--child", folder + "/run"],
                capture_output=True,
                text=True,
                cwd=here,
                check=True,
            )
        rows.append(json.loads(next(line for line in done.stderr.splitlines() if line.startswith("{"))))
    seconds, cpu = sorted(row["first_call_s"] for row in rows), sorted(row["cpu_s"] for row in rows)
    print(
        f"first LLM call after {seconds[len(seconds) // 2]:.3f} s (median of {len(rows)}; "
        f"{seconds[0]:.3f}-{seconds[-1]:.3f}), {cpu[len(cpu) // 2]:.3f} s of CPU (median), "
        f"{rows[0]['modules']} modules imported by then"
    )
    discovery = subprocess.run([sys.executable, "-c", DISCOVERY], capture_output=True, text=True, check=True)
    print(discovery.stdout.strip())


DISCOVERY = """
import time
from ragbench._registry import Registry
Registry.discover()  # the plugins' modules imported once
times = []
for _ in range(21):
    started = time.perf_counter()
    registry = Registry.discover()
    registry.expand_tasks(["demo"])
    times.append(time.perf_counter() - started)
times.sort()
print(f"plugin discovery and the lookup of task demo: {times[10] * 1000:.1f} ms (median of 21, imports warm)")
"""


if __name__ == "__main__":
    main()

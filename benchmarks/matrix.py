"""The system x task matrix: every built-in system on every built-in task, on the small offline data of
tests/support/matrix_fixtures.py with a scripted model. Prints the table (a task per row, a system per column:
✓, or the one-line reason a cell is refused or failed), cells working / total, and LLatrieval's LLM calls
per example per task (from its system_stats).

    python benchmarks/matrix.py            # 2 examples per cell (~5 min on 2 vCPUs: 25 systems x 84 tasks)
    python benchmarks/matrix.py --quick    # 1 example per cell, the systems named in --systems or QUICK_SYSTEMS,
                                           # on QUICK_TASKS: the script's own paths (a working cell, a refused
                                           # one, LLatrieval's calls); tests/run/test_matrix.py runs every kind of cell
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from ragbench._errors import ConfigError
from ragbench._registry import Registry, installed_registry
from ragbench._run.evaluator import Evaluator, RunConfig
from support.matrix_fixtures import TASK_DATA, build_corpus_index, cell_config

QUICK_SYSTEMS = ("llatrieval", "replug")  # cells that work and give the calls table; cells refused (scripted logits)
QUICK_TASKS = ("demo", "nq_open")  # own passages, an open-domain corpus


def run_cell(
    system: str, task: str, folder: Path, limit: int, corpus_index: Path, registry: Registry
) -> tuple[str, dict]:
    """One cell's verdict and results; `registry` is read once for all cells (a run changes nothing in it)."""
    try:
        results = (
            Evaluator(RunConfig.of(**cell_config(task, system, folder, limit, corpus_index)), registry=registry)
            .run()
            .results
        )
    except ConfigError as exc:
        return f"refused: {exc}", {}
    if not results["complete"]:
        return f"failed: {results.get('failures')}", results
    return "✓", results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=2, help="examples per cell")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="1 example per cell, llatrieval and replug (refused) on demo and nq_open: every path of the script",
    )
    parser.add_argument("--systems", nargs="*", help="only these systems (default: every built-in one)")
    args = parser.parse_args()
    limit = 1 if args.quick else args.limit
    registry = installed_registry()
    systems = [
        n
        for n in registry.names("systems")
        if registry.entries["systems"][n].provider == "ragbench"
        and n in (args.systems or (QUICK_SYSTEMS if args.quick else [n]))
    ]
    tasks = [n for n in registry.names("tasks") if n in TASK_DATA and (not args.quick or n in QUICK_TASKS)]
    cells: dict[tuple[str, str], str] = {}
    calls: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="ragbench-matrix-") as tmp:
        corpus_index = build_corpus_index(Path(tmp) / "index")  # what the open-domain cells search
        for system in systems:
            for task in tasks:
                verdict, results = run_cell(system, task, Path(tmp) / f"{system}-{task}", limit, corpus_index, registry)
                cells[system, task] = verdict
                if system == "llatrieval" and results:
                    calls[task] = results.get("system_stats", {}).get(task, {}).get("llm_calls_per_example", {})
    print("| task | " + " | ".join(systems) + " |")
    print("|---|" + "---|" * len(systems))
    for task in tasks:
        print(f"| {task} | " + " | ".join(cells[system, task] for system in systems) + " |")
    working = sum(1 for verdict in cells.values() if verdict == "✓")
    print(f"\ncells working: {working} / {len(cells)}")
    print("\nLLatrieval LLM calls per example (scripted model whose verifier never passes: 4 iterations):")
    for task, figures in calls.items():
        steps = ", ".join(f"{k} {v}" for k, v in figures.items() if k != "total" and v)
        print(f"  {task:<28} total {figures.get('total')}  ({steps})")


if __name__ == "__main__":
    main()

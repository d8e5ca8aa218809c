"""A failed example keeps its traceback in its sample (`traceback`), report.md shows the first one of each
failure cause, and `--fail-fast` stops the run at the first failed example with its traceback, leaving a
run that `--resume` completes."""
from __future__ import annotations

import json

from conftest import write_jsonl
from helpers import cli, samples

from ragbench.registry import Registry
from ragbench.run.evaluator import Evaluator, RunConfig
from ragbench.system import System
from ragbench.types import Prediction


class KeyErrorSystem(System):
    """A plugin under development: it reads a field the odd examples do not have."""

    name = "key_error_system"
    uses_llm = False

    async def run(self, example, ctx):
        return Prediction(example_id=example.id, answer=lookup_answer(example))


def lookup_answer(example) -> str:
    fields = {} if int(example.id) % 2 else {"answer": example.gold["answers"][0]}
    return fields["answer"]


def run_failing_system(tmp_path, popqa_records) -> dict:
    registry = Registry.discover()
    registry.add_catalog({"systems": {"key_error_system": {"target": "test_failure_tracebacks:KeyErrorSystem"}}},
                         "tests")
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records[:4])
    config = RunConfig(tasks=["popqa"], system="key_error_system", data={"popqa": str(data)},
                       output=str(tmp_path / "run"), progress=False, bootstrap_iters=10)
    return Evaluator(config, registry=registry).run().results


def test_a_failed_example_keeps_its_traceback_beside_its_one_line_error(tmp_path, popqa_records):
    run_failing_system(tmp_path, popqa_records)
    failed = [s for s in samples(tmp_path / "run", "popqa") if s["error"]]
    assert [s["id"] for s in failed] == ["101", "103"] and failed[0]["error"] == "KeyError: 'answer'"
    trace = failed[0]["traceback"]
    assert trace.startswith("Traceback (most recent call last):") and trace.rstrip().endswith("KeyError: 'answer'")
    assert 'in lookup_answer\n    return fields["answer"]' in trace
    assert all("traceback" not in s for s in samples(tmp_path / "run", "popqa") if not s["error"])


def test_report_and_results_show_the_first_traceback_of_each_cause(tmp_path, popqa_records):
    results = run_failing_system(tmp_path, popqa_records)
    [cause] = results["failures"]["popqa"]
    assert cause["cause"] == "KeyError" and cause["ids"] == ["101", "103"] and "in lookup_answer" in cause["traceback"]
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "### popqa: KeyError (first: 101)\n\n```text\nTraceback (most recent call last):" in report
    assert 'return fields["answer"]' in report


def test_a_long_traceback_keeps_its_end():
    from ragbench.run.example import TRACEBACK_CHARS, traceback_text

    def recurse(n: int) -> None:
        if n == 0:
            raise ValueError("the bottom")
        recurse(n - 1) if n % 2 else (lambda: recurse(n - 1))()  # alternating frames: nothing folds them

    try:
        recurse(300)
    except ValueError as exc:
        text = traceback_text(exc)
    assert len(text) <= TRACEBACK_CHARS + 4 and text.startswith("...\n") and text.endswith("ValueError: the bottom\n")


def test_fail_fast_stops_at_the_first_failed_example_with_its_traceback_and_resume_completes(tmp_path,
                                                                                              popqa_records):
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records)
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"pattern": "person [1-5]", "response": "answer"}]), encoding="utf-8")
    args = ["--tasks", "popqa", "--system", "closed_book", "--model", f"scripted:{rules}", "--data",
            f"popqa={data}", "--max-inflight", "1", "--no-progress", "--bootstrap-iters", "10",
            "--output", str(tmp_path / "r")]
    stopped = cli(*args, "--fail-fast")
    assert stopped.returncode == 1
    assert "Traceback (most recent call last):" in stopped.stderr and "in answer\n" in stopped.stderr
    last = stopped.stderr.strip().splitlines()[-1]
    assert last.startswith("ragbench: --fail-fast: popqa 100 failed: EngineError: no scripted rule matches")
    assert last.endswith("--resume tries it again)")
    assert not (tmp_path / "r" / "results.json").exists()
    assert [s["id"] for s in samples(tmp_path / "r", "popqa")] == ["100"]  # stopped there: nothing after it ran
    rules.write_text(json.dumps([{"response": "answer"}]), encoding="utf-8")  # the cause fixed
    resumed = cli(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert results["counts"]["popqa"] == {"records": 6, "scored": 6, "failed": 0, "bad_records": 0, "missing": 0,
                                         "metric_failures": 0}

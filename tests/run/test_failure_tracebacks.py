"""A failed example keeps its traceback in its sample (`traceback`), and a metric that raised keeps its own
(`score_tracebacks`); report.md shows the first one of each failure cause, and `--fail-fast` stops the run
at the first failed example or metric with its traceback, leaving a run that `--resume` completes."""

from __future__ import annotations

import json

from click.testing import CliRunner

from conftest import write_jsonl
from ragbench.api import Prediction, System, SystemDeclaration
from ragbench.testing import Registry, cli, run_eval
from support import scoring_plugin
from support.helpers import cli_here, cli_run_args, samples, task_counts
from support.scoring_plugin import plugin_state  # noqa: F401 (an autouse fixture: nothing failing, no calls counted)  # noqa: F401 (an autouse fixture: nothing failing, no calls counted)


class KeyErrorSystem(System):
    """A plugin under development: it reads a field the odd examples do not have."""

    name = "key_error_system"
    declares = SystemDeclaration(uses_llm=False)

    async def run(self, example, ctx):
        return Prediction(example_id=example.id, answer=lookup_answer(example))


def lookup_answer(example) -> str:
    fields = {} if int(example.id) % 2 else {"answer": example.gold["answers"][0]}
    return fields["answer"]


def run_failing_system(tmp_path, popqa_records) -> dict:
    registry = Registry.discover()
    registry.add_catalog(
        {"systems": {"key_error_system": {"target": "test_failure_tracebacks:KeyErrorSystem"}}}, "tests"
    )
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records[:4])
    run = run_eval(
        "popqa", "key_error_system", None, data=data, output=tmp_path / "run", registry=registry, bootstrap_iters=10
    )
    return run.results


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


def recurse(n: int) -> None:
    if n == 0:
        raise ValueError("the bottom")
    recurse(n - 1) if n % 2 else (lambda: recurse(n - 1))()  # alternating frames: nothing folds them


class DeepFailure(System):
    """Fails 300 frames down: a traceback longer than a sample keeps."""

    name = "deep_failure"
    declares = SystemDeclaration(uses_llm=False)

    async def run(self, example, ctx):
        recurse(300)


def test_a_long_traceback_keeps_its_end():
    """docs/running.md: a sample keeps at most the last 8,000 characters of its traceback."""
    [sample] = run_eval("demo", DeepFailure, None, limit=1).samples["demo"]
    text = sample.traceback
    assert len(text) <= 8_000 + 4 and text.startswith("...\n") and text.endswith("ValueError: the bottom\n")


def test_fail_fast_stops_at_the_first_failed_example_with_its_traceback_and_resume_completes(tmp_path, popqa_records):
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records)
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"pattern": "person [1-5]", "response": "answer"}]), encoding="utf-8")
    args = [
        *cli_run_args(f"scripted:{rules}", task="popqa"),
        "--data",
        f"popqa={data}",
        "--max-inflight",
        "1",
        "--no-progress",
        "--bootstrap-iters",
        "10",
        "--output",
        str(tmp_path / "r"),
    ]
    stopped = cli_here(*args, "--fail-fast")
    assert stopped.returncode == 1
    assert "Traceback (most recent call last):" in stopped.stderr and "in answer\n" in stopped.stderr
    last = stopped.stderr.strip().splitlines()[-1]
    assert last.startswith("ragbench: --fail-fast: popqa 100 failed: EngineError: no scripted rule matches")
    assert last.endswith("--resume tries it again)")
    assert not (tmp_path / "r" / "results.json").exists()
    assert [s["id"] for s in samples(tmp_path / "r", "popqa")] == ["100"]  # stopped there: nothing after it ran
    write_jsonl(data, [{**r, "question": "Who is person 1?"} for r in popqa_records])  # the cause fixed in the data
    resumed = cli_here(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert results["counts"]["popqa"] == task_counts(6, 6)


# --- metrics that raise ------------------------------------------------------------------------------


def run_raising_metric(tmp_path, failing: set[str], *extra: str, metrics: str = "match,scored:raise,scored:string"):
    """Four examples of the demo task through the command line, scored by `metrics`: `scored:raise` raises on
    the ids in `failing`, `scored:string` returns a value that is not a score."""
    scoring_plugin.FAILING.clear()
    scoring_plugin.FAILING.update(failing)
    args = [
        *cli_run_args(scoring_plugin.SYSTEM),
        "--limit",
        "4",
        "--metrics",
        metrics,
        "--no-progress",
        "--bootstrap-iters",
        "10",
        "--output",
        str(tmp_path / "run"),
        *extra,
    ]
    return CliRunner().invoke(cli, args, obj=scoring_plugin.registry())


def test_a_metric_that_raises_keeps_its_traceback_beside_its_one_line_error(tmp_path):
    run_raising_metric(tmp_path, {"9001"})
    records = {s["id"]: s for s in samples(tmp_path / "run", "demo")}
    failed = records["9001"]
    assert failed["score_errors"]["scored:raise"] == "RuntimeError: flaky metric on 9001"
    trace = failed["score_tracebacks"]["scored:raise"]
    assert trace.startswith("Traceback (most recent call last):")
    assert trace.endswith("RuntimeError: flaky metric on 9001\n")
    assert 'in score\n    raise RuntimeError(f"flaky metric on {example.id}")' in trace
    assert set(failed["score_tracebacks"]) == {"scored:raise"}  # a value that is not a score: its message says all
    assert all("score_tracebacks" not in records[i] for i in ("9000", "9002", "9003"))


def test_report_shows_the_first_traceback_of_each_failed_metric(tmp_path):
    run_raising_metric(tmp_path, {"9001", "9003"})
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    groups = {group["cause"]: group for group in results["failures"]["demo"]}
    assert groups["metric scored:raise: RuntimeError"]["traceback"].endswith("RuntimeError: flaky metric on 9001\n")
    assert "traceback" not in groups["metric scored:string: InvalidScore"]
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert (
        "### demo: metric scored:raise: RuntimeError (first: 9001)\n\n```text\nTraceback (most recent call last):"
        in report
    ) and 'raise RuntimeError(f"flaky metric on {example.id}")' in report


def test_fail_fast_stops_at_the_first_failed_metric_with_its_traceback_and_resume_completes(tmp_path):
    fail_fast = ("--max-inflight", "1", "--fail-fast")
    stopped = run_raising_metric(tmp_path, {"9001"}, *fail_fast, metrics="match,scored:raise")
    assert stopped.exit_code == 1
    assert "Traceback (most recent call last):" in stopped.stderr and "in score\n" in stopped.stderr
    last = stopped.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "ragbench: --fail-fast: demo 9001 metric scored:raise failed: RuntimeError: flaky metric on "
        "9001; the run stopped there"
    ) and last.endswith("--resume tries it again)")
    assert not (tmp_path / "run" / "results.json").exists()
    assert [s["id"] for s in samples(tmp_path / "run", "demo")] == ["9000", "9001"]  # nothing after it ran
    again = run_raising_metric(tmp_path, {"9001"}, *fail_fast, "--resume", metrics="match,scored:raise")
    # re-scored first, failing again: stopped again
    assert again.exit_code == 1 and "demo 9001 metric scored:raise failed" in again.stderr.strip().splitlines()[-1]
    resumed = run_raising_metric(tmp_path, set(), *fail_fast, "--resume", metrics="match,scored:raise")  # fixed
    assert resumed.exit_code == 0, resumed.output
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["complete"] and results["counts"]["demo"]["scored"] == 4

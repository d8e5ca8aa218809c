"""What the user reads: `score`'s summary and report.md say what went wrong, repeated failures are grouped
with their ids, `--version` gives what a bug report needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ragbench.tasks.selfrag
from support.helpers import cli_here, run

DEMO = Path(ragbench.tasks.selfrag.__file__).parent / "data" / "demo_qa.jsonl"
BROKEN = '{"id": 1, "output": "x", "label": tru}'
IDS = [json.loads(line)["id"] for line in DEMO.read_text().splitlines()]


def test_score_says_what_went_wrong_in_the_predictions_file(tmp_path):
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(
        "".join(json.dumps({"id": i, "output": "x"}) + "\n" for i in IDS[:4])
        + json.dumps({"id": IDS[0], "output": "again"})
        + "\n"
        + json.dumps({"id": "no-such-id", "output": "x"})
        + "\n"
        + BROKEN
        + "\n"
    )
    result = cli_here(
        "score", "--task", "demo", "--predictions", str(predictions), "--output", str(tmp_path / "r"), "--no-progress"
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    missing = len(IDS) - 4
    shown = ", ".join(str(i) for i in IDS[4:9])
    assert (
        f"demo: {missing} x MissingPrediction: {shown} ... (+{missing - 5}) - e.g. MissingPrediction:" in result.stderr
    )
    assert f"pred.jsonl:5 field 'id': duplicate id '{IDS[0]}'" in result.stderr
    assert "pred.jsonl: unknown id 'no-such-id' (not in the task's data)" in result.stderr
    assert f"pred.jsonl:7: not valid JSON at column {BROKEN.index('tru') + 1}" in result.stderr
    assert (
        f"incomplete run (demo: {missing} failed example(s) (MissingPrediction), 3 problem(s) in the system's "
        "input (e.g. its predictions file);"
    ) in result.stderr
    report = (tmp_path / "r" / "report.md").read_text()
    assert f"**incomplete: demo: {missing} failed example(s) (MissingPrediction), 3 problem(s)" in report
    assert f"- demo: {missing} x MissingPrediction: {shown} ... (+{missing - 5})" in report
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    [group] = results["failures"]["demo"]
    assert group["count"] == missing and group["ids"] == [str(i) for i in IDS[4:]]


def test_version_names_what_a_bug_report_needs():
    result = cli_here("--version")
    assert result.returncode == 0
    first, python, packages = result.stdout.strip().splitlines()
    assert first.startswith("ragbench ") and "(git " in first
    assert python.startswith("Python 3.") and "numpy " in packages


GIT_COUNTED = """
import json, subprocess, sys
started = []
real = subprocess.run
def counted(command, *args, **kwargs):
    if isinstance(command, (list, tuple)) and command[:1] == ["git"]:
        started.append(command)
    return real(command, *args, **kwargs)
subprocess.run = counted
from ragbench.testing import run_eval
hashes = [run_eval("demo", "closed_book", limit=1).results["versions"]["git_hash"] for _ in range(2)]
print(json.dumps({"hashes": hashes, "git_started": len(started)}))
"""


def test_the_git_commit_is_read_once_per_process(tmp_path):
    """Every run's results.json names the commit: read once, as the package versions are, not a `git` process
    started for every run (two runs in one fresh process start `git` once)."""
    done = subprocess.run(
        [sys.executable, "-c", GIT_COUNTED], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    counted = json.loads(done.stdout.strip().splitlines()[-1])
    first, second = counted["hashes"]
    assert first == second and counted["git_started"] == 1


def test_scoring_a_runs_samples_fails_its_failed_examples_again_never_scores_them_as_empty(tmp_path):
    # a run's own samples/<task>.jsonl is a predictions file; its failed examples hold "error" and an empty output
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text("".join(json.dumps({"id": i, "output": "Paris"}) + "\n" for i in IDS[:4]))
    first = run(tmp_path, "first", tasks=["demo"], system="recorded", system_args={"path": str(predictions)})
    again = run(
        tmp_path,
        "again",
        tasks=["demo"],
        system="recorded",
        system_args={"path": str(tmp_path / "first" / "samples" / "demo.jsonl")},
    )
    assert again["results"] == first["results"] and again["results"]["demo"]["em"] == 0.25
    assert again["details"]["demo"]["em"]["n"] == 4 and again["counts"]["demo"]["failed"] == len(IDS) - 4
    [group] = again["failures"]["demo"]
    assert group["cause"] == "FailedPrediction" and group["ids"] == [str(i) for i in IDS[4:]]
    assert f"records that example '{IDS[4]}' failed: MissingPrediction: " in group["example"]

"""Records DRAGUN's AutoJudge and scoring script, run unchanged, against the fake OpenAI-compatible judge
(tests/support/dragun_fake_judge.py) on ragbench's sample data (tests/data/dragun/data, the resources repository's data/
layout, written for ragbench): for Task 2 (auto_report_evaluation, dragun_calls.json) and Task 1
(auto_compound_question_check then auto_question_evaluation, dragun_question_calls.json) every request body as
sent, in order, the assessments CSVs auto_judge.py wrote, the per-topic and per-run results utils/score.py wrote
from them, and score.py's per-topic results from the human assessments (--type human).

    git clone https://github.com/trec-dragun/resources DRAGUN   # commit 4b60fb6
    python3 -m venv /tmp/dragun-venv && /tmp/dragun-venv/bin/pip install -r DRAGUN/requirements.txt
    python tests/data/parity/dragun/record_dragun.py DRAGUN /tmp/dragun-venv/bin/python

auto_judge.py names its server in a constant (BASE_URL, "replace it with your vLLM server address"): the script is
left as it stands and run by runpy with openai.OpenAI given the fake judge's address. Writes both files beside
this script.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parents[2]
sys.path.insert(0, str(TESTS))
from support.dragun_fake_judge import fake_judge  # noqa: E402

SAMPLE = TESTS / "data" / "dragun" / "data"
LAUNCH = """
import os, runpy, sys
import openai
given = openai.OpenAI.__init__
def at_fake_judge(self, *args, **kwargs):
    given(self, *args, **(kwargs | {"base_url": os.environ["DRAGUN_JUDGE_URL"]}))
openai.OpenAI.__init__ = at_fake_judge
sys.argv = ["auto_judge/auto_judge.py", *sys.argv[1:]]
runpy.run_path("auto_judge/auto_judge.py", run_name="__main__")
"""


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def autojudge(python: str, repo: Path, env: dict[str, str], task: str, runs: str) -> None:
    """auto_judge.py --task TASK on data/runs/RUNS, writing under auto_judge/output."""
    judging = [
        "--task",
        task,
        "--input_folder_path",
        f"./data/runs/{runs}",
        "--output_folder_path",
        "./auto_judge/output",
    ]
    subprocess.run([python, "-c", LAUNCH, *judging], cwd=repo, env=env, check=True)


def score(python: str, repo: Path, env: dict[str, str], task: str, kind: str, assessed: Path, *more: str) -> None:
    """utils/score.py --task TASK --type KIND (human or auto), writing under utils/results."""
    scoring = ["utils/score.py", "--task", task, "--type", kind, "--assessment_input", str(assessed), *more]
    subprocess.run([python, *scoring, "--output", "./utils/results"], cwd=repo, env=env, check=True)


def record(checkout: Path, python: str) -> tuple[dict[str, object], dict[str, object]]:
    """The report evaluation's and the question evaluation's recordings."""
    commit = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    version = subprocess.run(
        [python, "-c", "import openai, pandas; print(openai.__version__, pandas.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    source = f"trec-dragun/resources {commit.stdout.strip()}, openai {version[0]}, pandas {version[1]}"
    judge = fake_judge()
    try:
        with tempfile.TemporaryDirectory() as scratch:
            repo = Path(scratch) / "resources"
            shutil.copytree(checkout, repo, ignore=shutil.ignore_patterns(".git", "output", "data"))
            shutil.copytree(SAMPLE, repo / "data")
            (repo / "auto_judge" / "output").mkdir()
            env = {"DRAGUN_JUDGE_URL": judge.base_url, "PATH": "/usr/bin:/bin"}
            output, results, human = (
                repo / "auto_judge" / "output",
                repo / "utils" / "results",
                repo / "data" / "human_assessments",
            )

            autojudge(python, repo, env, "auto_report_evaluation", "report_generation_runs")
            score(python, repo, env, "report_generation_evaluation", "auto", output / "auto_report_assessments.csv")
            score(python, repo, env, "report_generation_evaluation", "human", human / "report_assessments.csv")
            reports = {
                "source": source,
                "requests": [{"path": r["path"], "body": r["body"]} for r in judge.requests],
                "auto_report_assessments": rows(output / "auto_report_assessments.csv"),
                "per_topic": rows(results / "auto_report_generation_per_topic_results.csv"),
                "per_run": rows(results / "auto_report_generation_per_run_results.csv"),
                "human_per_topic": rows(results / "human_report_generation_per_topic_results.csv"),
            }

            judge.requests.clear()
            autojudge(python, repo, env, "auto_compound_question_check", "question_generation_runs")
            compound_requests = list(judge.requests)
            judge.requests.clear()
            autojudge(python, repo, env, "auto_question_evaluation", "question_generation_runs")
            compound = ("--compound_check_input", str(output / "auto_compound_question_check.csv"))
            evaluation = "question_generation_evaluation"
            score(python, repo, env, evaluation, "auto", output / "auto_question_assessments.csv", *compound)
            score(python, repo, env, evaluation, "human", human / "question_assessments.csv", *compound)
            questions = {
                "source": source,
                "compound_requests": [{"path": r["path"], "body": r["body"]} for r in compound_requests],
                "requests": [{"path": r["path"], "body": r["body"]} for r in judge.requests],
                "auto_compound_question_check": rows(output / "auto_compound_question_check.csv"),
                "auto_question_assessments": rows(output / "auto_question_assessments.csv"),
                "per_topic": rows(results / "auto_question_generation_per_topic_results.csv"),
                "per_run": rows(results / "auto_question_generation_per_run_results.csv"),
                "human_per_topic": rows(results / "human_question_generation_per_topic_results.csv"),
            }
            return reports, questions
    finally:
        judge.stop()


if __name__ == "__main__":
    for name, recorded in zip(
        ("dragun_calls.json", "dragun_question_calls.json"), record(Path(sys.argv[1]), sys.argv[2])
    ):
        (HERE / name).write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

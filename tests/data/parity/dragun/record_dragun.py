"""Records DRAGUN's AutoJudge and scoring script, run unchanged, against the fake OpenAI-compatible judge
(tests/support/dragun_fake_judge.py) on ragbench's sample data (tests/data/dragun/data, the resources repository's data/
layout, written for ragbench): every request body as sent, in order, the assessments CSV auto_judge.py wrote and
the per-topic and per-run results utils/score.py wrote from it.

    git clone https://github.com/trec-dragun/resources DRAGUN   # commit 4b60fb6
    python3 -m venv /tmp/dragun-venv && /tmp/dragun-venv/bin/pip install -r DRAGUN/requirements.txt
    python tests/data/parity/dragun/record_dragun.py DRAGUN /tmp/dragun-venv/bin/python

auto_judge.py names its server in a constant (BASE_URL, "replace it with your vLLM server address"): the script is
left as it stands and run by runpy with openai.OpenAI given the fake judge's address. Writes dragun_calls.json
beside this script.
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


def record(checkout: Path, python: str) -> dict[str, object]:
    commit = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    version = subprocess.run(
        [python, "-c", "import openai, pandas; print(openai.__version__, pandas.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    judge = fake_judge()
    try:
        with tempfile.TemporaryDirectory() as scratch:
            repo = Path(scratch) / "resources"
            shutil.copytree(checkout, repo, ignore=shutil.ignore_patterns(".git", "output", "data"))
            shutil.copytree(SAMPLE, repo / "data")
            (repo / "auto_judge" / "output").mkdir()
            env = {"DRAGUN_JUDGE_URL": judge.base_url, "PATH": "/usr/bin:/bin"}
            judging = [
                "--task", "auto_report_evaluation",
                "--input_folder_path", "./data/runs/report_generation_runs",
                "--output_folder_path", "./auto_judge/output",
            ]  # fmt: skip
            subprocess.run([python, "-c", LAUNCH, *judging], cwd=repo, env=env, check=True)
            assessed = repo / "auto_judge" / "output" / "auto_report_assessments.csv"
            scoring = [
                "utils/score.py", "--task", "report_generation_evaluation", "--type", "auto",
                "--assessment_input", str(assessed), "--output", "./utils/results",
            ]  # fmt: skip
            subprocess.run([python, *scoring], cwd=repo, env=env, check=True)
            results = repo / "utils" / "results"
            return {
                "source": f"trec-dragun/resources {commit.stdout.strip()}, openai {version[0]}, pandas {version[1]}",
                "requests": [{"path": r["path"], "body": r["body"]} for r in judge.requests],
                "auto_report_assessments": rows(assessed),
                "per_topic": rows(results / "auto_report_generation_per_topic_results.csv"),
                "per_run": rows(results / "auto_report_generation_per_run_results.csv"),
            }
    finally:
        judge.stop()


if __name__ == "__main__":
    recorded = record(Path(sys.argv[1]), sys.argv[2])
    (HERE / "dragun_calls.json").write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

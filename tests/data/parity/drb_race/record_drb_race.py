"""Records DeepResearch Bench's RACE, run unchanged, against the fake Gemini judge (tests/support/drb_fake_gemini.py) on
this folder's sample data: every request body as sent, in order, and the scores it wrote.

    git clone https://github.com/Ayanami0730/deep_research_bench DRB   # commit 214741e (v1.0, 2025-06-13)
    python3 -m venv /tmp/ref-venv && /tmp/ref-venv/bin/pip install google-genai==1.20.0 tqdm pandas numpy requests
    python tests/data/parity/drb_race/record_drb_race.py DRB /tmp/ref-venv/bin/python

The sample data (data/, in the repository's layout: tasks, criteria, reference reports and one model's reports,
all written for ragbench) replaces the repository's own in a copy of it (its scripts read fixed paths); run_benchmark.sh's RACE command is run as it stands, with one
worker so the requests come in a fixed order. Then each judge reply of replies.json (written for ragbench) is given
to the released scoring of one task (score_replies.py). Writes drb_race_calls.json beside this script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from support.drb_fake_gemini import fake_gemini, gemini_url  # noqa: E402

SAMPLES = (
    "prompt_data/query.jsonl",
    "criteria_data/criteria.jsonl",
    "test_data/cleaned_data/reference.jsonl",
    "test_data/raw_data/sample-model.jsonl",
)


def record(checkout: Path, python: str) -> dict[str, object]:
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
    version = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('google-genai'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    judge = fake_gemini()
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch) / "drb"
        shutil.copytree(checkout, repo, ignore=shutil.ignore_patterns(".git"))
        for folder in ("data/test_data/raw_data", "data/test_data/cleaned_data", "results"):
            shutil.rmtree(repo / folder, ignore_errors=True)
            (repo / folder).mkdir(parents=True)
        for sample in SAMPLES:
            shutil.copyfile(HERE / "data" / sample, repo / "data" / sample)
        env = dict(os.environ, GEMINI_API_KEY="fake", JINA_API_KEY="fake", GOOGLE_GEMINI_BASE_URL=gemini_url(judge))
        command = [
            python,
            "-u",
            "deepresearch_bench_race.py",
            "sample-model",
            "--raw_data_dir",
            "data/test_data/raw_data",
            "--max_workers",
            "1",
            "--query_file",
            "data/prompt_data/query.jsonl",
            "--output_dir",
            "results/race/sample-model",
        ]
        subprocess.run(command, cwd=repo, env=env, check=True)
        out = repo / "results/race/sample-model"
        raw = [json.loads(line) for line in (out / "raw_results.jsonl").read_text(encoding="utf-8").splitlines()]
        summary = (out / "race_result.txt").read_text(encoding="utf-8")
        scoring = [python, str(HERE / "score_replies.py"), str(HERE / "replies.json")]
        found = subprocess.run(scoring, cwd=repo, env=env | {"PYTHONPATH": str(repo)}, check=True, capture_output=True)
        replies = json.loads(found.stdout)
        requests = [{"path": request["path"], "body": request["body"]} for request in judge.requests]
    judge.stop()
    return {
        "reference": {
            "repository": "Ayanami0730/deep_research_bench",
            "commit": commit.stdout.strip(),
            "google-genai": version,
            "command": " ".join(command[1:]),
        },
        "requests": requests,
        "raw_results": raw,
        "race_result": summary,
        "replies": replies,
    }


if __name__ == "__main__":
    recording = record(Path(sys.argv[1]), sys.argv[2])
    text = json.dumps(recording, ensure_ascii=False, indent=1) + "\n"
    (HERE / "drb_race_calls.json").write_text(text, encoding="utf-8")

"""Records DeepResearch Bench's FACT, run unchanged, against the fake Gemini judge (tests/support/drb_fake_gemini.py, whose
FACT replies are tests/support/drb_fake_fact.py's) and a fake Jina Reader serving pages.jsonl (tests/support/drb_fake_jina.py), on
this folder's sample data: every judge request body and every reader request as sent, in order, each stage's
output file and the statistics it wrote.

    git clone https://github.com/Ayanami0730/deep_research_bench DRB   # commit 214741e (v1.0, 2025-06-13)
    python3 -m venv /tmp/ref-venv && /tmp/ref-venv/bin/pip install google-genai==1.20.0 tqdm pandas numpy requests
    python tests/data/parity/drb_fact/record_drb_fact.py DRB /tmp/ref-venv/bin/python

The sample data (data/prompt_data/query.jsonl and reports/sample-model.jsonl, written for ragbench) replaces the
repository's own in a copy of it; run_benchmark.sh's five FACT commands are run as they stand, with one process
each so the requests come in a fixed order; the scrape step through jina_redirect.py (the reader's URL is fixed in
utils/api.py: requests' calls to it are sent to the fake). Writes drb_fact_calls.json beside this script.
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
from support.drb_fake_jina import FakeJina  # noqa: E402

MODEL = "sample-model"
OUT = f"results/fact/{MODEL}"
QUERY = "data/prompt_data/query.jsonl"
RAW = f"data/test_data/raw_data/{MODEL}.jsonl"
STAGES = (
    ("utils.extract", "--raw_data_path", RAW, "--output_path", f"{OUT}/extracted.jsonl", "--query_data_path", QUERY),
    (
        "utils.deduplicate",
        "--raw_data_path",
        f"{OUT}/extracted.jsonl",
        "--output_path",
        f"{OUT}/deduplicated.jsonl",
        "--query_data_path",
        QUERY,
    ),
    ("utils.scrape", "--raw_data_path", f"{OUT}/deduplicated.jsonl", "--output_path", f"{OUT}/scraped.jsonl"),
    (
        "utils.validate",
        "--raw_data_path",
        f"{OUT}/scraped.jsonl",
        "--output_path",
        f"{OUT}/validated.jsonl",
        "--query_data_path",
        QUERY,
    ),
)
OUTPUTS = ("extracted", "deduplicated", "scraped", "validated")


def record(checkout: Path, python: str) -> dict[str, object]:
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
    version = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('google-genai'), m.version('requests'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    judge, reader = fake_gemini(), FakeJina(HERE / "pages.jsonl")
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch) / "drb"
        shutil.copytree(checkout, repo, ignore=shutil.ignore_patterns(".git"))
        for folder in ("data/test_data/raw_data", "results"):
            shutil.rmtree(repo / folder, ignore_errors=True)
            (repo / folder).mkdir(parents=True)
        (repo / OUT).mkdir(parents=True)
        shutil.copyfile(HERE / "data" / "prompt_data" / "query.jsonl", repo / QUERY)
        shutil.copyfile(HERE / "reports" / f"{MODEL}.jsonl", repo / RAW)
        env = dict(
            os.environ,
            GEMINI_API_KEY="fake",
            JINA_API_KEY="fake-jina-key",
            GOOGLE_GEMINI_BASE_URL=gemini_url(judge),
            FAKE_JINA_URL=reader.base_url,
        )
        commands = []
        for module, *args in STAGES:
            runner = [str(HERE / "jina_redirect.py"), module] if module == "utils.scrape" else ["-m", module]
            command = [python, "-u", *runner, *args, "--n_total_process", "1"]
            commands.append(" ".join([module, *args, "--n_total_process", "1"]))
            subprocess.run(command, cwd=repo, env=env, check=True)
        stat = [
            python,
            "-u",
            "-m",
            "utils.stat",
            "--input_path",
            f"{OUT}/validated.jsonl",
            "--output_path",
            f"{OUT}/fact_result.txt",
        ]
        subprocess.run(stat, cwd=repo, env=env, check=True)
        out = repo / OUT
        files = {
            name: [json.loads(line) for line in (out / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
            for name in OUTPUTS
        }
        summary = (out / "fact_result.txt").read_text(encoding="utf-8")
    judge.stop()
    reader.stop()
    return {
        "reference": {
            "repository": "Ayanami0730/deep_research_bench",
            "commit": commit.stdout.strip(),
            "google-genai": version[0],
            "requests": version[1],
            "commands": commands,
        },
        "requests": [{"path": request["path"], "body": request["body"]} for request in judge.requests],
        "reader_requests": reader.requests,
        **files,
        "fact_result": summary,
    }


if __name__ == "__main__":
    recording = record(Path(sys.argv[1]), sys.argv[2])
    text = json.dumps(recording, ensure_ascii=False, indent=1) + "\n"
    (HERE / "drb_fact_calls.json").write_text(text, encoding="utf-8")

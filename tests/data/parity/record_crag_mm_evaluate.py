"""Records tests/data/parity/crag_mm_evaluate.json: `local_evaluation.py --mode evaluate` of facebookresearch/CRAG-MM
at 36b6b4bcd5405b440d9f0f6d74cef6f2fcace2be, run unchanged as a command, on the turn files of
crag_mm_evaluate_cases.json, its judge a fake OpenAI server on 127.0.0.1 (tests/support/crag_mm_fake_judge.py)
reached through $OPENAI_BASE_URL.

Step 1, in ragbench's venv (writes each set's turn file, and the Llama-3.2 stand-in tokenizer where the hub client
finds meta-llama/Llama-3.2-1B-Instruct offline: CRAGEvaluator loads it even in evaluate mode, and never uses it there):
    python record_crag_mm_evaluate.py prepare DATA
Step 2, in a venv holding the repository's requirements but vllm, torch, qwen_vl_utils and cragmm-search-pipeline
(pandas, numpy, openai, tokenizers, datasets, rich, tqdm, loguru, python-dotenv, pillow, requests, anthropic,
google-generativeai, mistral_common, transformers); those four are only imported by the agents' modules, which
local_evaluation.py imports, and stood in here by empty modules on PYTHONPATH:
    python record_crag_mm_evaluate.py record CRAG_MM_CHECKOUT DATA
"""

import csv
import importlib.metadata as md
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = json.loads((HERE / "crag_mm_evaluate_cases.json").read_text(encoding="utf-8"))
SETS = {"single": "single-turn", "multi": "multi-turn", "crash": "single-turn"}
HUB_REPO = "models--meta-llama--Llama-3.2-1B-Instruct"
SNAPSHOT = "0" * 40
STUBS = {
    "torch/__init__.py": "class cuda:\n    @staticmethod\n    def device_count():\n        return 0\n",
    "vllm/__init__.py": "class LLM:\n    pass\n\n\nclass SamplingParams:\n    pass\n",
    "vllm/multimodal/__init__.py": "",
    "vllm/multimodal/utils.py": "def encode_image_base64(*args, **kwargs):\n    raise RuntimeError('not called')\n",
    "vllm/sampling_params.py": "class GuidedDecodingParams:\n    pass\n",
    "qwen_vl_utils/__init__.py": "def process_vision_info(*args, **kwargs):\n    raise RuntimeError('not called')\n",
    "cragmm_search/__init__.py": "",
    "cragmm_search/search.py": "class UnifiedSearchPipeline:\n    pass\n",
}
TABLE_ROW = re.compile(r"^[│|]\s*[│|]?\s*(.+?)\s+[│|]\s+(.+?)\s+[│|]")


def prepare(data: Path) -> None:
    sys.path.insert(0, str(HERE.parents[1]))
    from ragbench.tasks.crag_mm.synthetic import standin_llama32_tokenizer

    hub = data / "hf" / "hub" / HUB_REPO
    standin_llama32_tokenizer(hub / "snapshots" / SNAPSHOT)
    (hub / "refs").mkdir(parents=True, exist_ok=True)
    (hub / "refs" / "main").write_text(SNAPSHOT, encoding="utf-8")
    for name in SETS:
        with open(data / f"{name}.jsonl", "w", encoding="utf-8") as out:
            for row in CASES[name]:
                out.write(json.dumps({k: v for k, v in row.items() if k != "judge"}) + "\n")


def figures(output: str) -> list[list[str]]:
    """The printed metrics tables' rows (Metric, Value), both tables in order."""
    rows = []
    for line in output.splitlines():
        found = TABLE_ROW.match(line.strip().strip("│").strip())
        cells = [c.strip() for c in line.strip().strip("│").split("│") if c.strip()]
        if found and len(cells) == 2 and cells[0] not in ("Metric",):
            rows.append(cells)
    return rows


def record_set(checkout: Path, data: Path, name: str) -> dict:
    sys.path.insert(0, str(HERE.parents[1]))  # tests/: support/ needs nothing but the standard library
    from support.crag_mm_fake_judge import fake_judge

    plan = {row["agent_response"]: row["judge"] for row in CASES[name] if row["judge"] is not None}
    out = data / f"out-{name}"
    env = {
        **os.environ,
        "OPENAI_API_KEY": "fake-key",
        "HF_HOME": str(data / "hf"),
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": str(data / "stubs"),
        "COLUMNS": "160",
        "TERM": "dumb",
        "CRAG_CACHE_DIR": str(data / "images"),
    }
    with fake_judge(plan) as judge:
        env["OPENAI_BASE_URL"] = judge.base_url
        command = [
            sys.executable,
            "local_evaluation.py",
            "--mode",
            "evaluate",
            "--input-file",
            str(data / f"{name}.jsonl"),
            "--dataset-type",
            SETS[name],
            "--eval-model",
            "gpt-4o",
            "--num-workers",
            "1",
            "--no_progress",
            "--display-conversations",
            "0",
            "--output-dir",
            str(out),
        ]
        done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True)
        requests = list(judge.requests)
    result: dict = {"returncode": done.returncode, "requests": requests}
    if done.returncode != 0:
        result["error"] = done.stderr.strip().splitlines()[-1]
        return result
    [saved] = sorted(out.glob("*/scores_dictionary.json"))
    result["scores"] = json.loads(saved.read_text(encoding="utf-8"))
    result["printed"] = figures(done.stdout)
    with open(saved.parent / "turn_evaluation_results_all.csv", encoding="utf-8") as f:
        result["per_turn"] = [
            {
                "interaction_id": r["interaction_id"],
                **{k: r[k] == "True" for k in ("is_exact_match", "is_correct", "is_miss", "is_semantically_correct")},
            }
            for r in csv.DictReader(f)
        ]
    return result


def record(checkout: Path, data: Path) -> None:
    for path, text in STUBS.items():
        (data / "stubs" / path).parent.mkdir(parents=True, exist_ok=True)
        (data / "stubs" / path).write_text(text, encoding="utf-8")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True, text=True).stdout.strip()
    versions = ", ".join(f"{p} {md.version(p)}" for p in ("pandas", "numpy", "openai", "httpx2", "tokenizers", "rich"))
    fixture = {
        "how": (
            f"facebookresearch/CRAG-MM at {commit or '36b6b4bcd5405b440d9f0f6d74cef6f2fcace2be'}: `python "
            "local_evaluation.py --mode evaluate --input-file SET.jsonl --dataset-type single-turn|multi-turn "
            "--eval-model gpt-4o --num-workers 1 --no_progress --display-conversations 0` run unchanged, "
            f"python {sys.version.split()[0]}, {versions}; its OpenAI client reaching the fake judge of "
            "tests/support/crag_mm_fake_judge.py through $OPENAI_BASE_URL (every request body recorded, in order); "
            "the hub tokenizer CRAGEvaluator loads (unused in evaluate mode) ragbench's Llama-3.2 stand-in, "
            "offline; vllm, torch, qwen_vl_utils and cragmm_search empty import stand-ins "
            "(tests/data/parity/record_crag_mm_evaluate.py)"
        ),
    }
    for name in SETS:
        fixture[name] = record_set(checkout, data, name)
    (HERE / "crag_mm_evaluate.json").write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(Path(sys.argv[2]))
    else:
        record(Path(sys.argv[2]), Path(sys.argv[3]))

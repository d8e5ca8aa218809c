"""Hugging Face `evaluate` metrics as ragbench metrics (--metrics +hf:NAME), offline."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from test_compare import DEMO

from conftest import TEST_DATA, needs
from ragbench.api import ConfigError
from support import paths
from support.helpers import cli_here, cli_run_args, run

pytestmark = needs("evaluate", reason="pip install 'ragbench[evaluate]'")
METRIC = TEST_DATA / "evaluate" / "word_overlap.py"  # one reference per prediction
MULTI = TEST_DATA / "evaluate" / "best_overlap.py"  # a list of references per prediction
RECORDS = [json.loads(line) for line in DEMO.read_text().splitlines()]


def answering(tmp_path, pick) -> str:
    """A scripted model answering each demo question with pick(its record)."""
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"pattern": re.escape(r["question"]), "response": pick(r)} for r in RECORDS]))
    return f"scripted:{rules}"


def test_an_evaluate_metric_from_a_local_script_scores_a_run(tmp_path):
    model = answering(tmp_path, lambda r: r["answers"][0] if RECORDS.index(r) % 2 else "x")  # right on half
    name = f"hf:{METRIC}"
    results = run(
        tmp_path,
        tasks=["demo"],
        system="closed_book",
        model=model,
        metrics=["match", f"+{name}"],
        metric_args={f"{name}.compute.scale": 100.0, f"{name}.key": "word_overlap"},
    )
    assert results["results"]["demo"][name] == pytest.approx(50.0)
    assert results["details"]["demo"][name]["corpus"] and results["results"]["demo"]["match"] == 0.5


def test_an_unknown_metric_offline_is_a_clear_configuration_error(tmp_path, monkeypatch):
    import huggingface_hub  # noqa: F401  (before the flag: it reads it once, when imported; evaluate is imported after)

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")
    with pytest.raises(
        ConfigError,
        match=r"metric hf:no_such_metric_xyz: evaluate.load\('no_such_metric_xyz'\) "
        r"failed .*give a local metric script",
    ):
        run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo", metrics=["+hf:no_such_metric_xyz"])


def test_list_metrics_offers_any_evaluate_metric():
    listed = cli_here("list", "metrics").stdout
    assert re.search(r"\n  hf:NAME +any Hugging Face `evaluate` metric", listed)


def test_a_multi_reference_metric_gets_every_gold_answer(tmp_path):
    model = answering(tmp_path, lambda r: r["answers"][-1])  # "Shakespeare" for ["William Shakespeare", "Shakespeare"]
    name = f"hf:{MULTI}"
    every = run(tmp_path, tasks=["demo"], system="closed_book", model=model, metrics=[name])
    assert every["results"]["demo"][name] == pytest.approx(1.0)
    assert every["config"]["metric_configs"]["demo"][0]["references"] == "all"
    first = run(
        tmp_path,
        name="first",
        tasks=["demo"],
        system="closed_book",
        model=model,
        metrics=[name],
        metric_args={f"{name}.references": "first"},
    )
    shares = [
        1.0
        if len(r["answers"]) == 1 or r["answers"][-1] == r["answers"][0]
        else sum(w in r["answers"][-1].lower().split() for w in r["answers"][0].lower().split())
        / len(r["answers"][0].split())
        for r in RECORDS
    ]
    assert first["results"]["demo"][name] == pytest.approx(sum(shares) / len(shares)) != 1.0


def test_every_reference_to_a_single_reference_metric_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="takes one reference per prediction; use references=first"):
        run(
            tmp_path,
            tasks=["demo"],
            system="closed_book",
            model="scripted:echo",
            metrics=[f"hf:{METRIC}"],
            metric_args={f"hf:{METRIC}.references": "all"},
        )


def test_a_metric_in_the_local_evaluate_cache_loads_offline_by_name(tmp_path):
    """As `evaluate.load("word_overlap")` caches a hub metric: HF_HOME/modules/evaluate_modules/metrics/
    evaluate-metric--NAME/<hash>/NAME.py; offline, evaluate falls back to it."""
    cached = tmp_path / "hf" / "modules" / "evaluate_modules" / "metrics" / "evaluate-metric--word_overlap" / ("0" * 64)
    cached.mkdir(parents=True)
    shutil.copy(METRIC, cached / "word_overlap.py")
    for folder in (cached, cached.parent, cached.parent.parent):
        (folder / "__init__.py").touch()
    env = {
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_EVALUATE_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    found, missing = commands_in_a_fresh_process(
        [
            *cli_run_args("scripted:echo"),
            "--limit",
            "2",
            "--metrics",
            "+hf:word_overlap",
            "--metric-arg",
            "hf:word_overlap.key=word_overlap",
            "--output",
            str(tmp_path / "run"),
            "--no-progress",
        ],
        ["--tasks", "demo", "--model", "scripted:echo", "--metrics", "+hf:bleu", "--output", str(tmp_path / "bleu")],
        env=env,
    )
    assert found["returncode"] == 0, found["stderr"]
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["results"]["demo"]["hf:word_overlap"] is not None
    assert missing["returncode"] == 2 and "metric hf:bleu: evaluate.load('bleu') failed" in missing["stderr"]


def test_an_error_rate_is_lower_is_better_and_any_metric_can_say_so(tmp_path):
    wer = tmp_path / "wer.py"  # named like evaluate's word error rate
    shutil.copy(METRIC, wer)
    name, other = f"hf:{wer}", f"hf:{METRIC}"
    results = run(
        tmp_path,
        tasks=["demo"],
        system="closed_book",
        model="scripted:echo",
        metrics=[name, other],
        metric_args={f"{name}.key": "word_overlap", f"{other}.key": "word_overlap", f"{other}.higher_is_better": False},
    )
    assert results["details"]["demo"][name]["higher_is_better"] is False
    assert results["details"]["demo"][other]["higher_is_better"] is False
    default = run(
        tmp_path,
        name="default",
        tasks=["demo"],
        system="closed_book",
        model="scripted:echo",
        metrics=[other],
        metric_args={f"{other}.key": "word_overlap"},
    )
    assert default["details"]["demo"][other]["higher_is_better"] is True and default["complete"]


def commands_in_a_fresh_process(*commands: list[str], env: dict[str, str]) -> list[dict]:
    """Each command line's exit code, stdout and stderr, run one after another (as `cli_here` runs one) in a
    Python process started with `env`: evaluate reads HF_HOME and its offline flags when it is imported, and
    importing it (it imports torch) is the cost of a process."""
    script = "import json, sys; from support.helpers import cli_here; print(json.dumps([vars(cli_here(*json.loads(a))) for a in sys.argv[1:]]))"
    done = subprocess.run(
        [sys.executable, "-c", script, *map(json.dumps, commands)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, **env, "PYTHONPATH": paths.python_path()},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])

"""Hugging Face `evaluate` metrics as ragbench metrics (--metrics +hf:NAME), offline."""
from __future__ import annotations

import json
import re

import pytest
from conftest import TEST_DATA
from helpers import cli, run
from test_compare import DEMO

from ragbench.errors import ConfigError

pytest.importorskip("evaluate", reason="pip install 'ragbench[evaluate]'")
METRIC = TEST_DATA / "evaluate" / "word_overlap.py"


def test_an_evaluate_metric_from_a_local_script_scores_a_run(tmp_path):
    records = [json.loads(line) for line in DEMO.read_text().splitlines()]
    rules = tmp_path / "rules.json"  # right on half the questions
    rules.write_text(json.dumps([{"pattern": re.escape(r["question"]), "response": r["answers"][0] if i % 2 else "x"}
                                 for i, r in enumerate(records)]))
    name = f"hf:{METRIC}"
    results = run(tmp_path, tasks=["demo"], system="closed_book", model=f"scripted:{rules}",
                  metrics=["match", f"+{name}"], metric_args={f"{name}.compute.scale": 100.0, f"{name}.key": "word_overlap"})
    assert results["results"]["demo"][name] == pytest.approx(50.0)
    assert results["details"]["demo"][name]["corpus"] and results["results"]["demo"]["match"] == 0.5


def test_an_unknown_metric_offline_is_a_clear_configuration_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")
    with pytest.raises(ConfigError, match=r"metric hf:no_such_metric_xyz: evaluate.load\('no_such_metric_xyz'\) "
                                          r"failed .*give a local metric script"):
        run(tmp_path, tasks=["demo"], system="closed_book", model="scripted:echo", metrics=["+hf:no_such_metric_xyz"])


def test_list_metrics_offers_any_evaluate_metric():
    listed = cli("list", "metrics").stdout
    assert "  hf:NAME            any Hugging Face `evaluate` metric" in listed

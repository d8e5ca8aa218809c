"""`ragbench reproduce`: manifests, substitutions clearly labelled, ours beside the paper's numbers."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from test_compare import DEMO

from ragbench.testing import cli, installed_registry

DEMO_ROW = {
    "paper": "Demo paper",
    "table": "Table 1",
    "row": "Closed book | scripted",
    "status": "runnable",
    "tolerance": 5.0,
    "caveats": ["a test manifest"],
    "run": {"tasks": ["demo"], "system": "closed_book", "model": "scripted:echo"},
    "cells": [{"column": "Match (%)", "task": "demo", "metric": "match", "scale": 100, "paper": 50.0}],
}


@pytest.fixture
def registry_with_demo_row(monkeypatch, tmp_path):
    """The installed plugins with two rows of the demo added, which `reproduce` is handed (`obj`)."""
    records = [json.loads(line) for line in DEMO.read_text().splitlines()]
    rules = tmp_path / "rules.json"  # right on the first 12 of 24 questions: 50 %, the "paper's" number
    rules.write_text(
        json.dumps(
            [
                {"pattern": re.escape(r["question"]), "response": r["answers"][0] if i < 12 else "?"}
                for i, r in enumerate(records)
            ]
        )
    )
    registry = installed_registry()
    row = {**DEMO_ROW, "run": {**DEMO_ROW["run"], "model": f"scripted:{rules}"}, "provider": "tests"}
    monkeypatch.setitem(registry.reproductions, "demo.closed-book", row)
    monkeypatch.setitem(
        registry.reproductions,
        "demo.unreleased",
        {**row, "status": "not_reproducible", "why_not": "the checkpoint was never released"},
    )
    return registry


@pytest.fixture
def reproduce(registry_with_demo_row):
    """`ragbench reproduce ARGS` in this process, with the demo's rows."""
    return lambda *args: CliRunner().invoke(cli, ["reproduce", *args], obj=registry_with_demo_row)


def test_a_full_run_prints_ours_beside_the_paper_and_records_it(reproduce, tmp_path):
    result = reproduce("demo.closed-book", "--output", str(tmp_path / "run"), "--no-progress")
    assert result.exit_code == 0, result.output
    assert "**full reproduction run**" in result.output
    assert "| Match (%) | demo | match | 50 | 50.00 | +0.00 | yes |" in result.output
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["reproduction"]["cells"][0]["ours"] == 50.0 and results["reproduction"]["substituted"] == []
    assert "## Reproduction: demo.closed-book" in (tmp_path / "run" / "report.md").read_text()


def test_limit_and_substitutes_are_labelled_not_reproductions(reproduce, tmp_path):
    partial = reproduce("demo.closed-book", "--limit", "4", "--output", str(tmp_path / "a"), "--no-progress")
    assert "PARTIAL reproduction: only the first 4 examples" in partial.output
    other = reproduce("demo.closed-book", "--model", "scripted:echo", "--output", str(tmp_path / "b"), "--no-progress")
    assert "NOT a reproduction: model differ" in other.output


def test_a_row_that_cannot_be_reproduced_says_why_and_runs_only_with_a_substitute(reproduce, tmp_path):
    refused = reproduce("demo.unreleased", "--no-progress")
    assert refused.exit_code == 2 and "the checkpoint was never released" in refused.output
    ran = reproduce("demo.unreleased", "--model", "scripted:echo", "--output", str(tmp_path / "r"), "--no-progress")
    assert ran.exit_code == 0 and "NOT a reproduction" in ran.output


def test_list_and_unknown_names(reproduce):
    listed = reproduce("--list")
    assert "demo.unreleased" in listed.output and "not reproducible: the checkpoint was never released" in listed.output
    unknown = reproduce("demo.closed-boko")
    assert unknown.exit_code == 2 and "did you mean" in unknown.output


def test_list_says_which_rows_run_here_now_and_what_the_others_lack(
    reproduce, registry_with_demo_row, monkeypatch, tmp_path
):
    """Nothing is downloaded to tell: a data file not on disk is named, as are a model neither a folder nor in
    the Hugging Face cache, an engine's missing extra and the retriever's files; a row with all of them runs."""
    data = tmp_path / "data"
    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(data))
    model = tmp_path / "model"
    run = {"tasks": ["nq_open_flashrag"], "system": "vanilla", "model": f"hf:{model}"}
    run["retriever_args"] = {"index": str(tmp_path / "index")}
    monkeypatch.setitem(registry_with_demo_row.reproductions, "demo.open", {**DEMO_ROW, "run": run})
    monkeypatch.setitem(
        registry_with_demo_row.reproductions,
        "demo.vllm",
        {**DEMO_ROW, "run": {**DEMO_ROW["run"], "model": "vllm:someone/absent-model-xyz"}},
    )

    def state(listed: str, name: str) -> str:
        return next(line for line in listed.splitlines() if line.startswith(name + " ")).rsplit(" | ", 1)[1]

    listed = reproduce("--list").output
    assert state(listed, "demo.closed-book") == "runs here"
    assert state(listed, "demo.open") == (
        f"needs: model {model}, retriever index {tmp_path / 'index'}, data flashrag_nq_test.jsonl"
    )
    assert "model someone/absent-model-xyz" in state(listed, "demo.vllm")
    assert not data.exists()  # nothing downloaded, nothing written
    assert re.search(r"^\d+ of \d+ rows run on this machine now", listed.splitlines()[-1])
    data.mkdir()
    (data / "flashrag_nq_test.jsonl").write_text('{"id": "0", "question": "q", "golden_answers": ["a"]}\n')
    model.mkdir()
    (tmp_path / "index").mkdir()
    assert state(reproduce("--list").output, "demo.open") == "runs here"

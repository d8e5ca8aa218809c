"""`ragbench reproduce`: manifests, substitutions clearly labelled, ours beside the paper's numbers."""

from __future__ import annotations

import errno
import json
import re

import pytest
from click.testing import CliRunner
from test_compare import DEMO

import ragbench._cli.main as cli_module
from ragbench import _registry
from ragbench._reports.reproduce.rows import (
    Reproduction,
    compare_with_paper,
    get_reproduction,
    reproduction_config,
    verdict,
)
from ragbench._reports.results.schema import Results
from ragbench.api import ConfigError
from ragbench.testing import installed_registry

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
    monkeypatch.setattr(_registry, "installed_registry", lambda: registry)
    return registry


def reproduce(*args):
    return CliRunner().invoke(cli_module.main, ["reproduce", *args])


def test_the_shipped_manifests_cover_every_seed_paper_and_load(registry_with_demo_row):
    registry = registry_with_demo_row  # the installed plugins, read once (not once per manifest)
    names = [n for n in registry.reproductions if not n.startswith("demo.")]
    items = [get_reproduction(registry, n) for n in names]
    assert {item.paper for item in items} >= {"CRAG", "LLatrieval", "SMART", "OmniEval"}
    assert any(i.status == "runnable" for i in items) and all(i.why_not for i in items if i.status != "runnable")
    crag = get_reproduction(registry, "crag.task-3.gpt-4-turbo")
    assert [(c.metric, c.paper) for c in crag.cells] == [
        ("accuracy", 43.6),
        ("hallucination", 30.1),
        ("missing", 26.3),
        ("score", 13.4),
    ]
    assert get_reproduction(registry, "smart.smart-ours").status == "not_reproducible"


def test_a_full_run_prints_ours_beside_the_paper_and_records_it(registry_with_demo_row, tmp_path):
    result = reproduce("demo.closed-book", "--output", str(tmp_path / "run"), "--no-progress")
    assert result.exit_code == 0, result.output
    assert "**full reproduction run**" in result.output
    assert "| Match (%) | demo | match | 50 | 50.00 | +0.00 | yes |" in result.output
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["reproduction"]["cells"][0]["ours"] == 50.0 and results["reproduction"]["substituted"] == []
    assert "## Reproduction: demo.closed-book" in (tmp_path / "run" / "report.md").read_text()


def test_limit_and_substitutes_are_labelled_not_reproductions(registry_with_demo_row, tmp_path):
    partial = reproduce("demo.closed-book", "--limit", "4", "--output", str(tmp_path / "a"), "--no-progress")
    assert "PARTIAL reproduction: only the first 4 examples" in partial.output
    other = reproduce("demo.closed-book", "--model", "scripted:echo", "--output", str(tmp_path / "b"), "--no-progress")
    assert "NOT a reproduction: model differ" in other.output


def test_a_row_that_cannot_be_reproduced_says_why_and_runs_only_with_a_substitute(registry_with_demo_row, tmp_path):
    refused = reproduce("demo.unreleased", "--no-progress")
    assert refused.exit_code == 2 and "the checkpoint was never released" in refused.output
    ran = reproduce("demo.unreleased", "--model", "scripted:echo", "--output", str(tmp_path / "r"), "--no-progress")
    assert ran.exit_code == 0 and "NOT a reproduction" in ran.output


def test_list_and_unknown_names(registry_with_demo_row):
    listed = reproduce("--list")
    assert "demo.unreleased" in listed.output and "not reproducible: the checkpoint was never released" in listed.output
    unknown = reproduce("demo.closed-boko")
    assert unknown.exit_code == 2 and "did you mean" in unknown.output


def test_list_says_which_rows_run_here_now_and_what_the_others_lack(registry_with_demo_row, monkeypatch, tmp_path):
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


def test_verdicts_and_bad_manifests():
    item = Reproduction.from_manifest("x", DEMO_ROW)
    assert verdict(item, None, [], complete=False).startswith("INCOMPLETE")
    # a partial or substituted run that is also incomplete says both: its numbers leave failed examples out
    assert verdict(item, 4, [], complete=False).startswith("PARTIAL reproduction: only the first 4 examples")
    assert verdict(item, 4, [], complete=False).endswith(
        "; INCOMPLETE run: some examples or metrics failed and are left out of these numbers; see the report"
    )
    assert verdict(item, None, ["model"], complete=False).startswith("NOT a reproduction: model differ")
    assert "INCOMPLETE run" in verdict(item, None, ["model"], complete=False)
    assert "INCOMPLETE" not in verdict(item, 4, [], complete=True)
    with pytest.raises(ConfigError, match="bad manifest"):
        Reproduction.from_manifest("x", {"paper": "p"})
    with pytest.raises(ConfigError, match="unknown run option"):
        reproduction_config(Reproduction.from_manifest("x", {**DEMO_ROW, "run": {"tasks": ["demo"], "sytem": "a"}}), {})


def test_a_cell_reads_the_typed_results_a_metric_key_as_it_is_and_system_stats_by_their_prefix():
    item = Reproduction.from_manifest(
        "x",
        {
            **DEMO_ROW,
            "cells": [
                {"column": "BLEU", "task": "demo", "metric": "hf:bleu", "scale": 100, "paper": 20.0},
                {"column": "Docs", "task": "demo", "metric": "system_stats:docs_per_example", "scale": 1, "paper": 5.0},
                {"column": "Missing", "task": "other", "metric": "match", "scale": 1, "paper": None},
            ],
        },
    )
    results = Results(
        results={"demo": {"hf:bleu": 0.25}},
        details={},
        counts={},
        complete=True,
        cost={},
        config={},
        versions={},
        system_stats={"demo": {"docs_per_example": 4}},
    )
    assert [row.ours for row in compare_with_paper(item, results)] == [25.0, 4.0, None]


def test_a_reproduction_whose_record_cannot_be_written_ends_in_one_line_and_resumes(
    registry_with_demo_row, tmp_path, monkeypatch
):
    """The run finished; adding the paper's numbers to results.json and report.md meets a full disk (a write
    that fails: a real disk full at exactly this moment cannot be arranged)."""
    import ragbench._storage.files as files

    out = tmp_path / "run"

    def full(path, text):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    with monkeypatch.context() as patched:
        patched.setattr(files, "write_atomically", full)  # as `reproduce` imports it (the run's own writes not)
        failed = reproduce("demo.closed-book", "--output", str(out), "--no-progress")
    assert failed.exit_code == 1 and not isinstance(failed.exception, OSError), failed.output
    assert failed.output.strip().splitlines()[-1] == (
        f"ragbench: error: No space left on device: {out}/results.json; free space on that disk, then run the same "
        "command with --resume (what finished is saved)"
    )
    resumed = reproduce("demo.closed-book", "--output", str(out), "--no-progress", "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads((out / "results.json").read_text())["reproduction"]["cells"][0]["ours"] == 50.0
    assert (out / "report.md").read_text().count("## Reproduction: demo.closed-book") == 1

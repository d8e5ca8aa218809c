"""`ragbench reproduce`'s rows (ragbench._reports.reproduce.rows), units with no public face: the shipped manifests
load, the verdicts, a cell's reading of the typed results, and a record that meets a full disk (a write made to fail:
a real disk full at exactly that moment cannot be arranged). tests/run/test_reproduce.py tests the command."""

from __future__ import annotations

import errno
import json

import pytest
from test_reproduce import DEMO_ROW, registry_with_demo_row, reproduce  # noqa: F401 (fixtures)

from ragbench._reports.reproduce.rows import (
    Reproduction,
    compare_with_paper,
    get_reproduction,
    reproduction_config,
    verdict,
)
from ragbench._reports.results.schema import Results
from ragbench.api import ConfigError


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
    for item in items:  # every run a row names is one ragbench can make: its options are run options
        if item.run:
            reproduction_config(item, {} if item.status == "runnable" else {"model": "scripted:echo"})


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


def test_a_reproduction_whose_record_cannot_be_written_ends_in_one_line_and_resumes(reproduce, tmp_path, monkeypatch):
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


def test_the_retrievers_paths_are_no_substitution_but_its_other_options_are():
    """A row's retriever reads the user's folders (its index, corpus and model, and the options the row names in
    `retriever_paths`); changing how it searches (`search`, `image_k`) or who rewrites is another measurement."""
    run = {"tasks": ["demo"], "retriever": "cragmm_search", "retriever_args": {"search": "both", "image_index": "ix"}}
    item = Reproduction.from_manifest("x", {**DEMO_ROW, "run": run, "retriever_paths": ["image_index", "web_index"]})
    paths = {"image_index": "/data/ix", "web_index": "/data/web", "index": "/data/other"}
    config, substituted = reproduction_config(item, {"retriever_args": paths})
    assert substituted == [] and config.retrieval.retriever_args == {"search": "both", **paths}
    assert reproduction_config(item, {"retriever_args": {"search": "image"}})[1] == ["retriever_args"]
    assert reproduction_config(item, {"retriever_args": {"image_k": 5}})[1] == ["retriever_args"]
    assert reproduction_config(item, {"role_models": {"rewriter": "scripted:echo"}})[1] == ["role_models"]

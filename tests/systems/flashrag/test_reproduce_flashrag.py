"""FlashRAG's two method tables as reproduction manifests, as the catalogue holds them (`Registry.reproductions`):
every row, its numbers as printed, a run ragbench can start (its tasks, metrics, retriever and systems known; that
every shipped manifest loads and names only run options: tests/run/test_reproduce_rows.py)."""

from __future__ import annotations

from types import SimpleNamespace

from ragbench.testing import installed_registry
from support.helpers import cli_here


def manifest(fields: dict) -> SimpleNamespace:
    """A row's manifest, its fields (and each cell's) as attributes; `status` runnable where it says none."""
    cells = [SimpleNamespace(**cell) for cell in fields["cells"]]
    return SimpleNamespace(**{"status": "runnable", "why_not": "", **fields, "cells": cells})


def flashrag_rows() -> dict:
    return {
        name: manifest(fields)
        for name, fields in installed_registry().reproductions.items()
        if name.startswith("flashrag.")
    }


def test_every_row_of_both_tables_is_a_manifest_with_its_numbers_as_printed():
    rows = flashrag_rows()
    tables = {item.table for item in rows.values()}
    assert tables == {"Supporting Methods", "Reasoning-based Methods"}
    assert sum(item.table == "Supporting Methods" for item in rows.values()) == 18
    assert sum(item.table == "Reasoning-based Methods" for item in rows.values()) == 7
    standard = rows["flashrag.standard-rag"]
    assert [(cell.task, cell.metric, cell.paper) for cell in standard.cells] == [
        ("nq_open_flashrag", "em", 35.1),
        ("triviaqa_flashrag", "em", 58.9),
        ("hotpotqa_distractor_flashrag", "hotpot_f1", 35.3),
        ("2wikimultihopqa_flashrag", "hotpot_f1", 21.0),
        ("popqa_flashrag", "hotpot_f1", 36.7),
        ("webquestions_flashrag", "em", 15.7),
    ]
    search_r1 = rows["flashrag.search-r1"]
    assert [cell.paper for cell in search_r1.cells] == [45.2, 62.2, 49.2, 54.5, 42.6, 29.2, 59.9]
    assert search_r1.cells[2].column == "PopQA (EM)" and search_r1.cells[2].metric == "em"
    assert all(item.paper == "FlashRAG" and all(cell.scale == 100 for cell in item.cells) for item in rows.values())
    not_reproducible = {name for name, item in rows.items() if item.status != "runnable"}
    assert not_reproducible == {"flashrag.trace", "flashrag.spring", "flashrag.ret-robust", "flashrag.self-rag"}
    assert all(rows[name].why_not for name in not_reproducible)


def test_every_run_names_tasks_metrics_retriever_and_systems_ragbench_has():
    registry = installed_registry()
    for name, item in flashrag_rows().items():
        assert all(registry.entry("tasks", task) for task in item.run["tasks"]), name
        assert {cell.task for cell in item.cells} == set(item.run["tasks"]), name
        assert all(cell.metric in {"em", "hotpot_f1"} for cell in item.cells), name
        system = item.run["system"]
        assert registry.entry("systems", system), name
        if system == "closed_book":
            assert "retriever" not in item.run, name
        else:  # FlashRAG's e5 index, read as it is
            assert item.run["retriever"] == "faiss_index" and set(item.run["retriever_args"]) == {
                "index",
                "corpus",
                "model",
            }


def test_replug_runs_on_an_engine_that_mixes_next_token_distributions():
    registry = installed_registry()
    item = flashrag_rows()["flashrag.replug"]
    engine = registry.load("engines", item.run["model"].split(":", 1)[0])
    assert engine.decodes_ensembles, item.run["model"]


def test_a_refiner_row_takes_its_compressor_from_the_command_line(tmp_path):
    """The compressor's folder is the user's (--refiner-arg), as the retriever's files are (--retriever-arg)."""
    for name in ("flashrag.longllmlingua", "flashrag.recomp-abstractive", "flashrag.selective-context"):
        assert set(flashrag_rows()[name].run["refiner_args"]) == {"model"}, name
    result = cli_here(
        "reproduce",
        "flashrag.selective-context",
        "--refiner-arg",
        f"model={tmp_path / 'no-gpt2'}",
        "--output",
        str(tmp_path / "run"),
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"refiner selective_context: model={tmp_path / 'no-gpt2'}: no such file or folder" in result.stderr

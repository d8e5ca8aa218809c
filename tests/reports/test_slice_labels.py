"""Slice values are grouped as they are, never by their text alone: the number 1 and the string "1",
a record without a value and the string "None", are different slices, named alike in results.json,
report.md, its plots, `ragbench compare` and the viewer's rows (docs/outputs.md, "results.json and
report.md")."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragbench._reports.compare.comparison import compare_runs, load_run
from ragbench._reports.results.slice_labels import SliceLabels, ordered, slice_value
from ragbench._view.catalog import RunCatalog
from ragbench._view.site import Site
from ragbench.testing import installed_registry
from support.helpers import run
from support.slice_fixtures import EXPECTED, LEVELS, level_task


@pytest.fixture(scope="module")
def level_run(tmp_path_factory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("levels")
    task = level_task(folder)
    results = run(folder, tasks=[str(task)], system="closed_book", model=f"scripted:{folder / 'answers.json'}")
    return folder / "run", results


def test_results_keep_kinds_and_no_value_apart(level_run):
    _, results = level_run
    slices = results["details"]["levels"]["em"]["slices"]["level"]
    assert [(label, (entry["value"], entry["n"])) for label, entry in slices.items()] == list(EXPECTED.items())


def test_report_md_rows_name_the_same_slices(level_run):
    report = (level_run[0] / "report.md").read_text()
    rows = [f"| {label} | {n} | {value:.4f}" for label, (value, n) in EXPECTED.items()]
    places = [report.find(row) for row in rows]
    assert -1 not in places and places == sorted(places), places


def test_plot_bars_name_the_same_slices(level_run, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.axes import Axes

    from ragbench._reports.results.slice_plots import slice_plot

    ticks = []
    original = Axes.set_xticks
    monkeypatch.setattr(
        Axes,
        "set_xticks",
        lambda self, positions, labels=None, **kw: (
            ticks.append(list(labels or [])),
            original(self, positions, labels, **kw),
        )[1],
    )
    assert slice_plot("levels", "level", level_run[1]["details"]["levels"], ["em"], tmp_path).is_file()
    assert ticks == [[f"{label}\n(n={n})" for label, (_, n) in EXPECTED.items()]]


def test_compare_groups_by_the_same_slices(level_run):
    run_dir, _ = level_run
    report = compare_runs(load_run(run_dir), load_run(run_dir))
    rows = [(row.slice, row.n) for row in report.rows if row.metric == "em" and row.slice]
    assert rows == [(f"level={label}", n) for label, (_, n) in EXPECTED.items()]


def test_viewer_rows_carry_the_slice_labels_of_results(level_run):
    run_dir, _ = level_run
    site = Site(RunCatalog([str(run_dir.parent)]), registry=installed_registry())
    [rid] = [r.rid for r in site.runs]
    page = site.data(f"rows/{rid}/levels/0")
    assert page["slice_labels"] == {"level": list(EXPECTED)}
    assert [row["slices"]["level"] for row in page["rows"]] == [
        "1 [number]",
        "1 [number]",
        "1",
        "None",
        "(none)",
        "(none)",
        "10",
        "2",
    ]


def test_viewer_run_and_example_pages_name_the_same_slices_in_the_same_order(level_run):
    run_dir, _ = level_run
    site = Site(RunCatalog([str(run_dir.parent)]), registry=installed_registry())
    [rid] = [r.rid for r in site.runs]
    run_page = site.data(f"run/{rid}")
    assert run_page["slice_order"]["levels"]["level"] == list(EXPECTED)
    assert list(run_page["slices"]["levels"]["em"]["level"]) == list(EXPECTED)
    shown = [site.data(f"example/{rid}/levels/{n}")["slices"] for n in range(len(LEVELS))]
    assert shown == [
        {"level": label} for label in ("1 [number]", "1 [number]", "1", "None", "(none)", "(none)", "10", "2")
    ]


def test_no_value_beside_the_string_none_marker_and_booleans():
    labels = SliceLabels(
        [
            slice_value({"f": None}, "f"),
            slice_value({"f": "(none)"}, "f"),
            slice_value({"f": True}, "f"),
            slice_value({"f": "True"}, "f"),
            slice_value({"f": 2.5}, "f"),
        ]
    )
    assert labels.labels() == ["2.5", "True", "True [boolean]", "(none)", "(none) [no value]"]
    assert labels.label(slice_value({}, "f")) == "(none) [no value]"  # absent: no value, as null


def test_labels_order_numbers_as_numbers_and_no_value_last():
    labels = [
        "10",
        "2",
        "(none)",
        "hop_10",
        "hop_2",
        "-1",
        "0.5",
        "0.25",
        "easy",
        "2024-01-20",
        "2024-01-15",
        "1 [number]",
        "1",
    ]
    assert ordered(labels) == [
        "-1",
        "0.25",
        "0.5",
        "1",
        "1 [number]",
        "2",
        "10",
        "2024-01-15",
        "2024-01-20",
        "easy",
        "hop_2",
        "hop_10",
        "(none)",
    ]

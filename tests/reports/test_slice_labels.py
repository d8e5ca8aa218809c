"""Slice values are grouped as they are, never by their text alone: the number 1 and the string "1",
a record without a value and the string "None", are different slices, named alike in results.json,
report.md, its plots, `ragbench compare` and the viewer's rows (docs/outputs.md, "results.json and
report.md"). How labels are made and ordered, and the plot's bars, units: test_slice_plots.py and test_property_score_columns.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragbench.testing import run_eval
from support.helpers import cli_here
from support.slice_fixtures import EXPECTED, LEVELS, level_task
from support.viewer_pages import export_view, exported_page, run_ids


def level_results(folder: Path, output: Path) -> dict:
    """results.json of a run of the levels task (level_task) into `output`."""
    task = level_task(folder)
    model = f"scripted:{folder / 'answers.json'}"
    return run_eval(str(task), "closed_book", model, output=output, bootstrap_iters=200).results


@pytest.fixture(scope="module")
def level_run(tmp_path_factory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("levels")
    return folder / "run", level_results(folder, folder / "run")


@pytest.fixture(scope="module")
def level_site(level_run, tmp_path_factory) -> tuple[Path, str]:
    """The viewer's pages of the run, as `ragbench view --export` writes them, and the run's id there."""
    out = export_view([level_run[0].parent], tmp_path_factory.mktemp("levels_site") / "site")
    [rid] = run_ids(out)
    return out, rid


def test_results_keep_kinds_and_no_value_apart(level_run):
    _, results = level_run
    slices = results["details"]["levels"]["em"]["slices"]["level"]
    assert [(label, (entry["value"], entry["n"])) for label, entry in slices.items()] == list(EXPECTED.items())


def test_report_md_rows_name_the_same_slices(level_run):
    report = (level_run[0] / "report.md").read_text()
    rows = [f"| {label} | {n} | {value:.4f}" for label, (value, n) in EXPECTED.items()]
    places = [report.find(row) for row in rows]
    assert -1 not in places and places == sorted(places), places


def test_compare_groups_by_the_same_slices(level_run):
    run_dir, _ = level_run
    printed = cli_here("compare", str(run_dir), str(run_dir), "--full")
    assert printed.returncode == 0, printed.stderr
    rows = [line.split(" | ")[3:5] for line in printed.stdout.splitlines() if line.startswith("| levels | em |")]
    assert rows[1:] == [[f"level={label}", str(n)] for label, (_, n) in EXPECTED.items()]
    assert rows[0][0] == "all"  # then the slices, in the order results.json has them


def test_viewer_rows_carry_the_slice_labels_of_results(level_site):
    out, rid = level_site
    page = exported_page(out, f"rows/{rid}/levels/0")
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


def test_viewer_run_and_example_pages_name_the_same_slices_in_the_same_order(level_site):
    out, rid = level_site
    run_page = exported_page(out, f"run/{rid}")
    assert run_page["slice_order"]["levels"]["level"] == list(EXPECTED)
    assert list(run_page["slices"]["levels"]["em"]["level"]) == list(EXPECTED)
    shown = [exported_page(out, f"example/{rid}/levels/{n}")["slices"] for n in range(len(LEVELS))]
    assert shown == [
        {"level": label} for label in ("1 [number]", "1 [number]", "1", "None", "(none)", "(none)", "10", "2")
    ]

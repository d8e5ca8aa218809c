"""`ragbench compare`'s p-values adjusted for the number of comparisons shown, none on slices too small to
test, and slice rows that can be left out. The adjustments equal statsmodels' `multipletests` (0.15)."""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ragbench.tasks.selfrag
from ragbench._reports.compare.comparison import MIN_TESTED, adjust_p_values, compare_runs, load_run
from ragbench._reports.compare.full_report import markdown
from ragbench._statistics.multiple_testing import adjusted
from support.helpers import cli_here, run

DEMO = Path(ragbench.tasks.selfrag.__file__).parent / "data" / "demo_qa.jsonl"


def multipletests(p_values: list[float], method: str) -> tuple:
    """statsmodels' `multipletests`, without the full garbage collection its Holm branch ends with (which changes
    no number, and took 0.4 s a call in a test process holding torch's objects: most of this file's time).
    statsmodels is imported here, by the tests that use it, not by every xdist worker collecting the file."""
    from statsmodels.stats.multitest import multipletests as statsmodels_multipletests

    with mock.patch.object(gc, "collect", lambda *generation: 0):
        return statsmodels_multipletests(p_values, method=method)


p_values = st.lists(st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0, 0.05, 0.0005])), min_size=1, max_size=60)


@given(p_values)
@settings(max_examples=80, deadline=None)
def test_holm_and_benjamini_hochberg_equal_statsmodels(values):
    for ours, theirs in (("holm", "holm"), ("bh", "fdr_bh")):
        expected = multipletests(values, method=theirs)[1]
        assert adjusted(values, ours) == pytest.approx(list(expected), abs=1e-12)
    assert adjusted(values, "none") == values


@given(p_values)
@settings(max_examples=200, deadline=None)
def test_an_adjusted_p_value_is_never_below_the_raw_one_nor_above_one(values):
    for method in ("holm", "bh"):
        assert all(raw <= adj + 1e-15 and adj <= 1.0 for raw, adj in zip(values, adjusted(values, method)))


def demo_run(tmp_path, name: str, correct: int) -> Path:
    """A demo run (24 examples, sliced by `prop` into groups of a few) answering the first `correct` right."""
    records = [json.loads(line) for line in DEMO.read_text().splitlines()]
    rules = [
        {"pattern": re.escape(r["question"]), "response": r["answers"][0] if i < correct else "no idea"}
        for i, r in enumerate(records)
    ]
    (tmp_path / f"{name}.json").write_text(json.dumps(rules))
    run(tmp_path, name=name, tasks=["demo"], system="closed_book", model=f"scripted:{tmp_path / f'{name}.json'}")
    return tmp_path / name


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("p_values")
    return demo_run(folder, "a", correct=4), demo_run(folder, "b", correct=24)


def test_slices_too_small_to_test_have_no_p_value_and_the_rest_are_adjusted_as_one_family(two_runs):
    report = compare_runs(load_run(two_runs[0]), load_run(two_runs[1]))
    adjust_p_values([report], "holm")
    small = [row for row in report.rows if row.n < MIN_TESTED]
    tested = [row for row in report.rows if row.p_value is not None]
    assert small and all(row.p_value is None and row.p_adjusted is None for row in small)
    assert all(row.n >= MIN_TESTED for row in tested) and report.tested == len(tested) > 1
    expected = multipletests([row.p_value for row in tested], method="holm")[1]
    assert [row.p_adjusted for row in tested] == pytest.approx(list(expected))
    text = markdown(report)
    assert f"adjusted by Holm's method over the {len(tested)} comparison(s)" in text
    small_row = small[0]
    assert re.search(rf"\| {re.escape(small_row.slice)} \| {small_row.n} \|[^\n]*\| - \| - \| - \|", text)


def test_the_family_spans_every_run_compared_with_the_first(two_runs):
    a, b = load_run(two_runs[0]), load_run(two_runs[1])
    reports = [compare_runs(a, b), compare_runs(a, a)]
    adjust_p_values(reports, "bh")
    tested = [row for report in reports for row in report.rows if row.p_value is not None]
    assert reports[0].tested == reports[1].tested == len(tested)
    assert [row.p_adjusted for row in tested] == pytest.approx(
        list(multipletests([row.p_value for row in tested], method="fdr_bh")[1])
    )


def test_the_cli_names_its_adjustment_and_can_leave_the_slices_out(two_runs):
    printed = cli_here("compare", *map(str, two_runs), "--p-adjust", "bh", "--no-slices", "--full")
    assert printed.returncode == 0, printed.stderr
    assert "adjusted by Benjamini-Hochberg's method" in printed.stdout
    rows = [line for line in printed.stdout.splitlines() if line.startswith("| demo |")]
    assert rows and all("| all |" in line for line in rows)
    assert "prop=" not in printed.stdout


def test_a_comparison_with_no_row_to_test_says_so_rather_than_adjusting_over_zero(tmp_path):
    for name in ("a", "b"):
        run(tmp_path, name=name, tasks=["demo"], system="closed_book", model="scripted:echo", limit=MIN_TESTED - 1)
    report = compare_runs(load_run(tmp_path / "a"), load_run(tmp_path / "b"))
    adjust_p_values([report], "holm")
    note = markdown(report).rstrip().splitlines()[-1]
    assert note == f"p: none, as no row has {MIN_TESTED} or more shared examples (too few to test)"

"""report.md's slice plots label every bar with its value (a zero bar too), name n per slice and in
the title; the heat map names n per cell. Slice tables (report.md, results.json, the viewer) keep every
slice value of the task, also where the first key scored none, and a cell's n where it differs; a plot's bars are
named by the slice labels results.json has (where the labels reach the user: test_slice_labels.py)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_slice_labels import level_results

from conftest import needs
from ragbench._reports.results.slice_plots import matrix_plot, slice_matrix, slice_plot
from ragbench._reports.run_summary import slice_sections
from ragbench._view.pages import slice_tables
from support.helpers import run
from support.slice_fixtures import EXPECTED

pytestmark = needs("matplotlib")  # not imported while the tests are collected


@pytest.fixture
def drawn(monkeypatch):
    from matplotlib.axes import Axes

    seen = {"labels": [], "titles": [], "ticks": [], "texts": []}
    for name, key in (("bar_label", "labels"), ("set_title", "titles"), ("set_xticks", "ticks"), ("text", "texts")):
        original = getattr(Axes, name)

        def spy(self, *args, _original=original, _key=key, **kwargs):
            seen[_key].append((args, kwargs))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(Axes, name, spy)
    return seen


def test_bars_carry_values_zero_bars_included_and_n(tmp_path, drawn):
    details = {
        "accuracy": {
            "slices": {
                "domain": {
                    "movie": {"value": 0.5, "ci95": [0.2, 0.8], "n": 4},
                    "music": {"value": 0.0, "ci95": None, "n": 3},
                }
            }
        },
        "hallucination": {"slices": {"domain": {"movie": {"value": 0.0, "n": 4}, "music": {"value": 0.25, "n": 3}}}},
    }
    path = slice_plot("crag_t3", "domain", details, ["accuracy", "hallucination"], tmp_path)
    assert path.is_file()
    labels = [kwargs["labels"] for _, kwargs in drawn["labels"]]
    assert labels == [["0.50", "0.00"], ["0.00", "0.25"]]
    assert drawn["titles"][0][0][0] == "crag_t3 by domain (n=7)"
    assert list(drawn["ticks"][0][0][1]) == ["movie\n(n=4)", "music\n(n=3)"]


def test_heat_map_cells_name_their_n(tmp_path, drawn):
    details = {"f1": {"slices": {"cell": {"A - x": {"value": 0.5, "n": 2}, "B - y": {"value": 0.0, "n": 1}}}}}
    assert matrix_plot("omni", details, "f1", slice_matrix({"field": "cell"}), tmp_path).is_file()
    texts = sorted(args[2] for args, _ in drawn["texts"])
    assert texts == ["0.00\nn=1", "0.50\nn=2", "N/A", "N/A"]


def test_a_plot_laid_out_is_drawn_once_when_saved(tmp_path, monkeypatch):
    """tight_layout lays the figure out; savefig then draws it once (a layout engine left on the figure would have
    savefig draw it a second time first, to lay it out again: a third of a plot's time)."""
    from matplotlib.figure import Figure

    draws = []
    original = Figure.draw

    def counted(self, renderer):
        draws.append(renderer)
        return original(self, renderer)

    monkeypatch.setattr(Figure, "draw", counted)
    details = {"f1": {"slices": {"cell": {"A - x": {"value": 0.5, "n": 2}, "B - y": {"value": 0.0, "n": 1}}}}}
    assert slice_plot("omni", "cell", details, ["f1"], tmp_path).is_file()
    assert matrix_plot("omni", details, "f1", slice_matrix({"field": "cell"}), tmp_path).is_file()
    assert len(draws) == 2


def test_a_slice_the_first_key_never_scored_keeps_its_row_and_every_cell_its_own_n(tmp_path):
    # the judge's reply does not parse for every capital question and for one author question: llm_judge
    # (the first key) is not scorable there, em is
    judge = tmp_path / "judge.json"
    judge.write_text(
        json.dumps([{"pattern": "capital of|Romeo", "response": "I cannot tell"}, {"response": "correct"}])
    )
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps(
            [
                {"pattern": "capital of France", "response": "Paris"},
                {"pattern": "Romeo", "response": "Shakespeare"},
                {"response": "I do not know"},
            ]
        )
    )
    results = run(
        tmp_path,
        tasks=["demo"],
        system="closed_book",
        model=f"scripted:{answers}",
        metrics=["llm_judge", "em"],
        judges=[f"scripted:{judge}"],
    )
    details = results["details"]["demo"]
    assert details["llm_judge"]["slices"]["prop"]["capital"] == {"value": None, "ci95": None, "n": 0}
    assert details["em"]["slices"]["prop"]["capital"]["n"] == 6
    report = (tmp_path / "run" / "report.md").read_text()
    assert "| capital | 6 | - (n=0) | 6.0000 [6.000, 6.000] | 0.1667 [" in report  # the row the table left out
    assert "| author | 4 | 1.0000 [1.000, 1.000] (n=3) | " in report  # n 4: em's


def older_details() -> dict:
    """Slices as a results.json of an older ragbench wrote them: a key leaves out a value it scored nothing in."""
    return {
        "accuracy": {"slices": {"domain": {"movie": {"value": 0.5, "ci95": None, "n": 2}}}},
        "em": {
            "slices": {
                "domain": {
                    "movie": {"value": 0.25, "ci95": None, "n": 4},
                    "music": {"value": 1.0, "ci95": None, "n": 3},
                }
            }
        },
    }


def test_a_plot_shows_every_slice_value_with_the_most_examples_scored_there(tmp_path, drawn):
    assert slice_plot("t", "domain", older_details(), ["accuracy", "em"], tmp_path).is_file()
    assert list(drawn["ticks"][0][0][1]) == ["movie\n(n=4)", "music\n(n=3)"]
    labels = [kwargs["labels"] for _, kwargs in drawn["labels"]]
    assert labels == [["0.50\nn=2", "n/a\nn=0"], ["0.25", "1.00"]]


def test_the_viewer_gets_every_slice_value_for_every_key():
    tables, order = slice_tables(older_details())
    assert tables["accuracy"]["domain"]["music"] == {"value": None, "ci95": None, "n": 0}
    assert list(tables["accuracy"]["domain"]) == list(tables["em"]["domain"]) == order["domain"] == ["movie", "music"]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=150)
@given(
    matrix=st.fixed_dictionaries(
        {"field": JSON}, optional={"separator": JSON, "keys": JSON, "order": JSON, "labels": JSON}
    )
    | JSON
)
def test_a_matrix_not_as_documented_is_named_in_the_summary_never_dropped_silently(matrix):
    """A task's `matrix` either draws (every part of the documented kind) or the report says why it does not."""
    read = slice_matrix(matrix)
    if matrix is None:
        assert read is None
        return
    kinds = {"field": str, "separator": str, "keys": list, "order": list, "labels": dict}
    documented = isinstance(matrix, dict) and isinstance(matrix.get("field"), str)
    documented = documented and all(matrix.get(k) is None or isinstance(matrix[k], kinds[k]) for k in kinds)
    assert isinstance(read, dict) == documented
    if not documented:
        assert isinstance(read, str) and read.startswith("a `matrix` ")
        results = SimpleNamespace(config={"task_configs": {"t": {"matrix": matrix}}}, details={"t": {}})
        assert f"(no heat map of t: its config has {read})" in slice_sections(results)


def test_plot_bars_name_the_same_slices(tmp_path, monkeypatch):
    """The bars of the levels task's slices (test_slice_labels.py) are named by the labels results.json has; drawn
    here, as a run draws a task's plot only where the task names `plot_keys`, which a YAML task cannot."""
    from matplotlib.axes import Axes

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
    results = level_results(tmp_path, tmp_path / "run")
    assert slice_plot("levels", "level", results["details"]["levels"], ["em"], tmp_path).is_file()
    assert ticks == [[f"{label}\n(n={n})" for label, (_, n) in EXPECTED.items()]]

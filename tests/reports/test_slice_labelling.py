"""How slice values are labelled and ordered (ragbench._reports.results.slice_labels), units with no public face: a
record without a value, the string "(none)", a boolean and the string "True" are labelled apart, and labels order
numbers as numbers, no value last; a slice plot's bars are named by the labels. Where the labels reach the user: test_slice_labels.py."""

from __future__ import annotations

import pytest
from test_slice_labels import level_results

from ragbench._reports.results.slice_labels import SliceLabels, ordered, slice_value
from ragbench._reports.results.slice_plots import slice_plot
from support.slice_fixtures import EXPECTED


def test_plot_bars_name_the_same_slices(tmp_path, monkeypatch):
    """ ""(a task's plot is drawn where it names `plot_keys`, which the YAML task of test_slice_labels cannot)"""
    pytest.importorskip("matplotlib")
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

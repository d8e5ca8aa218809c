"""report.md's slice plots label every bar with its value (a zero bar too), name n per slice and in
the title; the heat map names n per cell."""
from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")
from matplotlib.axes import Axes  # noqa: E402

from ragbench._reports.slice_plots import matrix_plot, slice_plot  # noqa: E402


@pytest.fixture
def drawn(monkeypatch):
    seen = {"labels": [], "titles": [], "ticks": [], "texts": []}
    for name, key in (("bar_label", "labels"), ("set_title", "titles"), ("set_xticks", "ticks"), ("text", "texts")):
        original = getattr(Axes, name)

        def spy(self, *args, _original=original, _key=key, **kwargs):
            seen[_key].append((args, kwargs))
            return _original(self, *args, **kwargs)
        monkeypatch.setattr(Axes, name, spy)
    return seen


def test_bars_carry_values_zero_bars_included_and_n(tmp_path, drawn):
    details = {"accuracy": {"slices": {"domain": {"movie": {"value": 0.5, "ci95": [0.2, 0.8], "n": 4},
                                                  "music": {"value": 0.0, "ci95": None, "n": 3}}}},
               "hallucination": {"slices": {"domain": {"movie": {"value": 0.0, "n": 4}, "music": {"value": 0.25, "n": 3}}}}}
    path = slice_plot("crag_t3", "domain", details, ["accuracy", "hallucination"], tmp_path)
    assert path.is_file()
    labels = [kwargs["labels"] for _, kwargs in drawn["labels"]]
    assert labels == [["0.50", "0.00"], ["0.00", "0.25"]]
    assert drawn["titles"][0][0][0] == "crag_t3 by domain (n=7)"
    assert list(drawn["ticks"][0][0][1]) == ["movie\n(n=4)", "music\n(n=3)"]


def test_heat_map_cells_name_their_n(tmp_path, drawn):
    details = {"f1": {"slices": {"cell": {"A - x": {"value": 0.5, "n": 2}, "B - y": {"value": 0.0, "n": 1}}}}}
    assert matrix_plot("omni", details, "f1", {"field": "cell"}, tmp_path).is_file()
    texts = sorted(args[2] for args, _ in drawn["texts"])
    assert texts == ["0.00\nn=1", "0.50\nn=2", "N/A", "N/A"]

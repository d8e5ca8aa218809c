"""compare_N.png drawn as it is read: every bar's label inside the axes, none over the title, and a bar no test was
run on (too few shared examples) coloured neither better nor worse."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import installed
from ragbench._reports.compare.comparison import Comparison, Report
from ragbench._reports.compare.plot import plot
from ragbench._reports.results import slice_plots

pytestmark = pytest.mark.skipif(not installed("matplotlib"), reason="needs matplotlib")


def row(metric: str, diff: float, n: int, p_value: float | None) -> Comparison:
    return Comparison("demo", metric, "", n, 0.5, 0.5 + diff, diff, (diff - 0.05, diff + 0.05), p_value, "bootstrap")


ROWS = [
    row("em", 0.12, 300, 0.01),
    row("f1", 0.3, 300, 0.002),
    row("match", -0.08, 3, None),
    row("rouge", -0.02, 24, 0.4),
]


@pytest.fixture
def drawn(tmp_path, monkeypatch):
    """The figure `plot` saves, laid out as saved and drawn."""
    figures = []
    monkeypatch.setattr(slice_plots, "save_figure", lambda figure, path: figures.append(figure) or path)
    report = Report(
        SimpleNamespace(label="fm3_vanilla"), SimpleNamespace(label="runs/a-long-folder/fm3_self_ask"), ROWS
    )
    plot(report, tmp_path / "compare_1.png")
    (figure,) = figures
    figure.tight_layout()
    figure.canvas.draw()
    return figure


def test_bar_labels_stay_inside_the_axes_and_off_the_title(drawn):
    renderer = drawn.canvas.get_renderer()
    (axes,) = drawn.axes
    title, frame = axes.title.get_window_extent(renderer), axes.get_window_extent(renderer)
    labels = [text for text in axes.texts if "n=" in text.get_text()]
    assert len(labels) == len(ROWS)
    for text in labels:
        box = text.get_window_extent(renderer)
        assert not box.overlaps(title), text.get_text()
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1, text.get_text()  # clear of the tick labels below too
    assert title.x0 >= 0 and title.x1 <= drawn.bbox.width  # the title fits the figure's width


def test_a_bar_no_test_was_run_on_is_not_coloured_worse(drawn):
    from matplotlib.colors import to_rgba

    (axes,) = drawn.axes
    bars = axes.patches
    assert bars[0].get_facecolor() == to_rgba("tab:green")
    assert bars[3].get_facecolor() == to_rgba("tab:red")  # tested, and worse
    assert bars[2].get_facecolor() not in (to_rgba("tab:red"), to_rgba("tab:green"))  # n=3: not tested
    assert "not tested" in next(text.get_text() for text in axes.texts if "n=3\n" in text.get_text())


@settings(max_examples=15, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(-1, 1, allow_nan=False),
            st.floats(0, 1, allow_nan=False),
            st.floats(0, 1, allow_nan=False),
            st.booleans(),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_whatever_the_differences_and_intervals_no_label_leaves_the_axes(rows):
    """All above zero, all below, intervals far wider than the bars or none, one row or a dozen."""
    report = Report(
        SimpleNamespace(label="a"),
        SimpleNamespace(label="b"),
        [
            Comparison("t", f"m{i}", "", 50, 0.5, 0.5 + d, d, (d - lo, d + hi), 0.5 if tested else None, "bootstrap")
            for i, (d, lo, hi, tested) in enumerate(rows)
        ],
    )
    figures = []
    save, slice_plots.save_figure = slice_plots.save_figure, lambda figure, path: figures.append(figure) or path
    try:
        plot(report, Path("unused.png"))
    finally:
        slice_plots.save_figure = save
    (figure,) = figures
    figure.tight_layout()
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    (axes,) = figure.axes
    frame, title = axes.get_window_extent(renderer), axes.title.get_window_extent(renderer)
    for text in axes.texts:
        box = text.get_window_extent(renderer)
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1 and not box.overlaps(title), text.get_text()

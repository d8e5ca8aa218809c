"""Per-slice bar charts for report.md (as CRAG's Figure 2): one PNG per task and slice field,
bars of the task's `plot_keys` for every slice value, with 95% intervals; and the pyplot and
figure-saving helpers the reports' plots share. Needs matplotlib; without it the report keeps its
tables and says so."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from ..._storage.files import replacing
from ..._values.json_values import JsonValue
from ..._values.names import inside
from .schema import Cell, KeyDetails
from .slice_labels import ordered


def subplots(nrows: int = 1, ncols: int = 1, **figure_args: Any) -> tuple[Any, Any]:
    """A figure and its axes as `pyplot.subplots` makes them, drawn by Agg (files only, no display needed) without
    pyplot: its import and its figure manager cost a report's plots more CPU than their PNGs' encoding, and the
    backend of the process that called (a notebook's) stays its own."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(**{key: value for key, value in figure_args.items() if key != "squeeze"})
    FigureCanvasAgg(figure)
    return figure, figure.subplots(nrows, ncols, squeeze=figure_args.get("squeeze", True))


def slice_rows(details: Mapping[str, KeyDetails], keys: list[str], field: str) -> list[tuple[str, int, list[Cell]]]:
    """A slice table's rows: every value of the field that any key has (a key without it: n 0), the most
    examples a key scored there (the row's n: a cell whose own n is less says so), each key's entry."""
    labels = ordered({label for key in keys for label in details[key].get("slices", {}).get(field, {})})
    rows = []
    for label in labels:
        cells: list[Cell] = [
            details[key].get("slices", {}).get(field, {}).get(label) or {"value": None, "ci95": None, "n": 0}
            for key in keys
        ]
        rows.append((label, max(cell.get("n", 0) for cell in cells), cells))
    return rows


def save_figure(figure: Any, path: Path) -> Path:
    """Lay the figure out and write it at 110 dpi (the folder made if needed); a PNG at zlib level 1 (the same
    pixels as the default level 6, a fifth of its encoding CPU). The file is replaced whole: a link at `path` (to a
    file of the user's) is replaced, never written through."""
    figure.tight_layout()
    figure.set_layout_engine(None)  # laid out: savefig then draws it once, not a dry run first to lay it out again
    path.parent.mkdir(parents=True, exist_ok=True)
    kind = path.suffix.lstrip(".") or "png"
    with replacing(path) as handle:
        figure.savefig(handle, dpi=110, format=kind, **({"pil_kwargs": {"compress_level": 1}} if kind == "png" else {}))
    return path


def slice_plot(task: str, field: str, details: Mapping[str, KeyDetails], keys: list[str], out_dir: Path) -> Path | None:
    import numpy as np

    keys = [k for k in keys if k in details and field in details[k].get("slices", {})]
    if not keys:
        return None
    rows = slice_rows(details, keys, field)
    labels = [label for label, _, _ in rows]
    width = 0.8 / len(keys)
    figure, axes = subplots(figsize=(max(6.0, 1.1 * len(labels) * len(keys) ** 0.5 + 2), 4))
    positions = np.arange(len(labels))
    for i, key in enumerate(keys):
        entries = [cells[i] for _, _, cells in rows]
        values = [e.get("value") or 0.0 for e in entries]
        errors = [
            [max(0.0, v - (e.get("ci95") or [v, v])[0]) for v, e in zip(values, entries)],
            [max(0.0, (e.get("ci95") or [v, v])[1] - v) for v, e in zip(values, entries)],
        ]
        bars = axes.bar(positions + (i - (len(keys) - 1) / 2) * width, values, width, yerr=errors, capsize=2, label=key)
        # every bar carries its value, so a zero bar is seen (a sliver and "0.00") and not taken for a missing one
        for bar in bars:
            if bar.get_height() == 0:
                bar.set_height(max(values + [1.0]) * 0.004)
        axes.bar_label(
            bars,
            labels=[
                (f"{v:.2f}" if e.get("value") is not None else "n/a")
                + (f"\nn={e.get('n', 0)}" if e.get("n", 0) < n else "")
                for v, e, (_, n, _) in zip(values, entries, rows)
            ],
            fontsize=6,
            padding=1,
        )
    counts = [n for _, n, _ in rows]
    axes.set_xticks(positions, [f"{label}\n(n={n})" for label, n in zip(labels, counts)], fontsize=8)
    axes.axhline(0, color="black", linewidth=0.6)
    axes.set_title(f"{task} by {field} (n={sum(counts)})")
    axes.legend(fontsize=8)
    return save_figure(figure, inside(out_dir, f"{task}__{field}.png"))


class SliceMatrix(TypedDict):
    """A task's two-way slice (its config's `matrix`, e.g. OmniEval's topic x task): the slice field whose labels are
    `row + separator + column`, the keys drawn, the order of rows and columns, and names shown for labels."""

    field: str
    separator: str
    keys: list[str]
    order: list[str]
    labels: dict[str, str]


MATRIX_PARTS: dict[str, tuple[type, str]] = {
    "separator": (str, "a str"),
    "keys": (list, "a list"),
    "order": (list, "a list"),
    "labels": (dict, "a mapping"),
}


def slice_matrix(value: JsonValue) -> SliceMatrix | str | None:
    """A task config's `matrix` read as a `SliceMatrix` (separator " - " where it names none); None where the task
    has none; what is wrong with it, as a line for the summary, where it is not one (no heat map is then drawn)."""
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(field := value.get("field"), str):
        return "a `matrix` without a str `field` (the slice field of its row and column labels)"
    separator, keys, order, labels = (value.get(name) for name in ("separator", "keys", "order", "labels"))
    wrong = [
        f"`{name}` not {word}"
        for name, (kind, word) in MATRIX_PARTS.items()
        if not isinstance(value.get(name), (kind, type(None)))
    ]
    if wrong:
        return f"a `matrix` with {', '.join(wrong)}"
    return {
        "field": field,
        "separator": separator if isinstance(separator, str) else " - ",
        "keys": [str(key) for key in keys] if isinstance(keys, list) else [],
        "order": [str(name) for name in order] if isinstance(order, list) else [],
        "labels": {name: str(shown) for name, shown in labels.items()} if isinstance(labels, dict) else {},
    }


def matrix_plot(
    task: str, details: Mapping[str, KeyDetails], key: str, matrix: SliceMatrix, out_dir: Path
) -> Path | None:
    """A heat map of `key` over a two-way slice (as OmniEval's topic x task Figure 4): the slice
    field `matrix["field"]` holds `row + separator + column` labels; `labels` renames them for
    display (fonts without CJK glyphs); an empty cell is left blank (N/A)."""
    import numpy as np

    cells = details[key].get("slices", {}).get(matrix["field"]) if key in details else None
    if not cells:
        return None
    split = {label: label.rsplit(matrix["separator"], 1) for label in cells}
    rows = list(dict.fromkeys(parts[0] for parts in split.values()))
    cols = list(dict.fromkeys(parts[-1] for parts in split.values()))
    rank = {name: i for i, name in enumerate(matrix["order"])}
    rows.sort(key=lambda r: rank.get(r, len(rank)))
    cols.sort(key=lambda c: rank.get(c, len(rank)))
    grid = np.full((len(rows), len(cols)), np.nan)
    for label, parts in split.items():
        value = cells[label].get("value")
        if value is not None:
            grid[rows.index(parts[0]), cols.index(parts[-1])] = value
    names = matrix["labels"]
    figure, axes = subplots(figsize=(2 + 1.3 * len(cols), 1 + 0.45 * len(rows)))
    image = axes.imshow(np.ma.masked_invalid(grid), cmap="YlGnBu", aspect="auto")
    axes.set_xticks(range(len(cols)), [names.get(c, c) for c in cols], rotation=30, ha="right", fontsize=8)
    axes.set_yticks(range(len(rows)), [names.get(r, r) for r in rows], fontsize=8)
    for (i, j), value in np.ndenumerate(grid):
        label = f"{rows[i]}{matrix['separator']}{cols[j]}"
        n = cells[label].get("n", 0) if label in cells else 0
        axes.text(j, i, "N/A" if np.isnan(value) else f"{value:.2f}\nn={n}", ha="center", va="center", fontsize=7)
    figure.colorbar(image, ax=axes)
    axes.set_title(f"{task}: {key}")
    return save_figure(figure, inside(out_dir, f"{task}__matrix__{key}.png"))

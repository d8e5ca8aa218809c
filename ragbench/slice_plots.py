"""Per-slice bar charts for report.md (as CRAG's Figure 2): one PNG per task and slice field,
bars of the task's `plot_keys` for every slice value, with 95% intervals. Needs matplotlib;
without it the report keeps its tables and says so."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def slice_plot(task: str, field: str, details: dict[str, Any], keys: list[str], out_dir: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    keys = [k for k in keys if field in details.get(k, {}).get("slices", {})]
    if not keys:
        return None
    labels = list(details[keys[0]]["slices"][field])
    width = 0.8 / len(keys)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.1 * len(labels) * len(keys) ** 0.5 + 2), 4))
    positions = np.arange(len(labels))
    for i, key in enumerate(keys):
        entries = [details[key]["slices"][field].get(label, {}) for label in labels]
        values = [e.get("value") or 0.0 for e in entries]
        errors = [[max(0.0, v - (e.get("ci95") or [v, v])[0]) for v, e in zip(values, entries)],
                  [max(0.0, (e.get("ci95") or [v, v])[1] - v) for v, e in zip(values, entries)]]
        axes.bar(positions + (i - (len(keys) - 1) / 2) * width, values, width, yerr=errors, capsize=2, label=key)
    counts = [details[keys[0]]["slices"][field][label].get("n", 0) for label in labels]
    axes.set_xticks(positions, [f"{label}\n(n={n})" for label, n in zip(labels, counts)], fontsize=8)
    axes.axhline(0, color="black", linewidth=0.6)
    axes.set_title(f"{task} by {field}")
    axes.legend(fontsize=8)
    figure.tight_layout()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{task}__{field}.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path

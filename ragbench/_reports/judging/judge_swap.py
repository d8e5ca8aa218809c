"""`ragbench rescore RUN --judge B`'s judge-swap report: for every judged key (of a metric that asks a judge), how
far the rescoring's judges agree with the run's own on the same predictions, and how much the headline moves.

The examples are paired by id: those both scorings gave a value (a judge's reply that did not parse, a metric
that failed: no value, left out and the pairs counted). Per key: the agreement of the two judges
(ragbench._statistics.rater_agreement), the mean before and after over the paired examples, their difference and
its 95% paired bootstrap interval (ragbench._statistics.paired_tests, the one `ragbench compare` reads). An
interval that leaves out 0 says the other judge changes the conclusion on this key. results.json `judge_swap`, report.md
and the console show it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..._records import read_samples
from ..._statistics.bootstrap import mean
from ..._statistics.paired_tests import paired_bootstrap
from ..._statistics.rater_agreement import agreement
from ..results.schema import JudgeSwap, Results
from .judge_agreement import number_text, share_text


def judged_values(samples: Path, keys: Iterable[str]) -> dict[str, dict[str, float]]:
    """key -> example id -> value, over the records of a samples file that hold a value of the key."""
    values: dict[str, dict[str, float]] = {key: {} for key in keys}
    for record in read_samples(samples, has_text=False):
        if record.id is None or record.error is not None:
            continue
        for key, found in values.items():
            value = record.scores.get(key)
            if value is not None:
                found[record.id] = value
    return values


def judge_swap(
    before: Path, after: Path, keys: list[str], judges: tuple[str, str], iterations: int, seed: int
) -> dict[str, JudgeSwap]:
    """Per judged key, the report of `after`'s samples (the rescoring's) against `before`'s (the run's);
    `judges`: how each is named ("openai:x", "openai:y"). A key neither scored is left out."""
    old, new = judged_values(before, keys), judged_values(after, keys)
    out: dict[str, JudgeSwap] = {}
    for key in keys:
        if not (old[key] or new[key]):
            continue
        shared = sorted(old[key].keys() & new[key].keys())
        a = np.array([old[key][i] for i in shared], dtype=float)
        b = np.array([new[key][i] for i in shared], dtype=float)
        stats = agreement([[x, y] for x, y in zip(a.tolist(), b.tolist(), strict=True)])
        interval = paired_bootstrap(a, b, iterations, seed)[0] if len(shared) >= 2 else None
        out[key] = {
            "judge": judges[0],
            "against": judges[1],
            "examples": len(shared),
            "percent_agreement": stats["percent_agreement"],
            "cohen_kappa": stats["cohen_kappa"],
            "krippendorff_alpha": stats["krippendorff_alpha"],
            "flipped": stats["flipped"],
            "before": mean(a) if shared else None,
            "after": mean(b) if shared else None,
            "delta": mean(b - a) if shared else None,
            "delta_ci95": list(interval) if interval is not None else None,
        }
    return out


def judge_swap_lines(results: Results) -> list[str]:
    """One line per judged key of a rescoring with other judges, for report.md and the console."""
    lines = []
    for task, keys in (results.judge_swap or {}).items():
        for key, entry in keys.items():
            delta, interval = entry["delta"], entry["delta_ci95"]
            moved = "n/a" if delta is None else f"{delta:+.4f}"
            if interval is not None:
                moved += f" [{interval[0]:+.4f}, {interval[1]:+.4f}]"
                moved += (
                    " (its interval leaves out 0: the judge moves it)" if interval[0] > 0 or interval[1] < 0 else ""
                )
            lines.append(
                f"{task} {key}: judge {entry['against']} vs the run's {entry['judge']} on {entry['examples']} "
                f"example(s): agreement {share_text(entry['percent_agreement'])}, kappa "
                f"{number_text(entry['cohen_kappa'])}, alpha {number_text(entry['krippendorff_alpha'])}, verdict "
                f"flipped on {share_text(entry['flipped'])}; headline {number_text(entry['before'])} -> "
                f"{number_text(entry['after'])}, delta {moved}"
            )
    return lines

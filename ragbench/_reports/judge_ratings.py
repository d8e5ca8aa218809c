"""results.json `judge_agreement`: per task and judged key, how far the raters of its examples agree (the repeats of
a sampled judge, several judges: ragbench._run.judge_raters) and the headline's interval with the judge's variance
in it, gathered from the samples' `judge_ratings`; report.md and the console show it beside the numbers.

Per key: the raters, the examples two of them or more rated, percent agreement, Cohen's kappa (two raters),
Krippendorff's alpha (interval distances: a verdict's values are ordered, CRAG's -1 < 0 < 1), the share of examples
whose verdict flipped (ragbench._reports.judge_agreement), the ratings without a value (a reply that did not parse
is no verdict; a rater's scoring that failed neither) and those of them whose scoring failed (with the commonest cause), and `ci95_judged`, the two-level bootstrap
interval of the headline (`judged_interval`; the examples' alone: `details` `ci95`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .._records import SampleRecord
from .judge_agreement import agreement, judged_interval
from .results_schema import JudgeAgreement, Results


class JudgeRatings:
    """A task's raters' values, gathered sample by sample (in data order)."""

    def __init__(self) -> None:
        self.tables: dict[str, list[list[float | None]]] = {}  # key -> per example, each rater's value
        self.raters: dict[str, list[str]] = {}
        self.averaged: dict[str, int] = {}
        self.failed: dict[str, Counter[str]] = {}  # key -> failed ratings by cause

    def add(self, sample: SampleRecord) -> None:
        if sample.error is not None or sample.bad_record:
            return
        for entry in sample.judge_ratings.values():
            errors = list((entry.get("errors") or {}).values())
            for key, values in entry["scores"].items():
                self.tables.setdefault(key, []).append(values)
                self.raters.setdefault(key, entry["raters"])
                self.averaged.setdefault(key, entry.get("averaged", 1))
                self.failed.setdefault(key, Counter()).update(error[:200] for error in errors)

    def section(self, iterations: int, seed: int) -> dict[str, JudgeAgreement]:
        """The task's `judge_agreement`: per key, its agreement and judged interval (empty: no key had raters)."""
        out: dict[str, JudgeAgreement] = {}
        for key, table in self.tables.items():
            interval = judged_interval(table, iterations, seed, self.averaged[key])
            failed = self.failed[key]
            out[key] = {
                "raters": self.raters[key],
                "averaged": self.averaged[key],
                **{k: v for k, v in agreement(table).items() if k != "raters"},  # type: ignore[typeddict-item]
                "missing_ratings": sum(v is None for row in table for v in row),
                "failed_ratings": sum(failed.values()),
                "failure": failed.most_common(1)[0][0] if failed else None,
                "ci95_judged": list(interval) if interval is not None else None,
            }
        return out


def judge_agreement_lines(results: Results) -> list[str]:
    """One line per judged key with raters, for report.md and the console."""
    lines = []
    for task, keys in (results.judge_agreement or {}).items():
        for key, entry in keys.items():
            cell: dict[str, Any] = dict((results.details.get(task) or {}).get(key) or {})
            raters = entry["raters"]
            headline = "the mean of its judges" if entry["averaged"] > 1 else raters[0]
            kappa = f", kappa {number_text(entry['cohen_kappa'])}" if len(raters) == 2 else ""
            notes = [
                f"{entry['missing_ratings']} rating(s) without a verdict" if entry["missing_ratings"] else "",
                f"{entry['failed_ratings']} rating(s) failed ({entry['failure']})" if entry["failed_ratings"] else "",
            ]
            lines.append(
                f"{task} {key}: {len(raters)} raters ({', '.join(raters)}) on {entry['examples']} example(s): "
                f"agreement {share_text(entry['percent_agreement'])}{kappa}, alpha "
                f"{number_text(entry['krippendorff_alpha'])}, verdict flipped on {share_text(entry['flipped'])}; "
                f"headline ({headline}) {number_text(cell.get('value'))}, 95% CI with the judge's variance "
                f"{interval_text(entry['ci95_judged'])}, examples' alone {interval_text(cell.get('ci95'))}"
                + "".join(f"; {note}" for note in notes if note)
            )
    return lines


def interval_text(interval: list[float] | None) -> str:
    """An interval as "[low, high]" with four places, "n/a" where there is none."""
    return "n/a" if interval is None else f"[{interval[0]:.4f}, {interval[1]:.4f}]"


def share_text(value: float | None) -> str:
    """A share as a percentage, "n/a" where there is none."""
    return "n/a" if value is None else f"{value:.1%}"


def number_text(value: Any) -> str:
    """A value with four places, "n/a" where there is none."""
    return "n/a" if value is None else f"{value:.4f}"

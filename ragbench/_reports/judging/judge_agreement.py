"""results.json `judge_agreement`: per task and judged key, how far the raters of its examples agree (the repeats of
a sampled judge, several judges: ragbench._run.judges.raters) and the headline's interval with the judge's variance
in it, gathered from the samples' `judge_ratings`; report.md and the console show it beside the numbers.

Per key: the raters, the examples two of them or more rated, percent agreement, Cohen's kappa (two raters),
Krippendorff's alpha (interval distances: a verdict's values are ordered, CRAG's -1 < 0 < 1), the share of examples
whose verdict flipped (ragbench._statistics.rater_agreement), the ratings without a value (a reply that did not
parse is no verdict; a rater's scoring that failed neither) and those of them whose scoring failed (with the commonest
cause), and `ci95_judged`, the two-level bootstrap interval of the headline (`judged_interval`; the examples' alone:
`details` `ci95`).

Every other judged key of the run (a metric that asks a judge, judged once) has an entry too, `measured` false:
its agreement is unknown, not perfect, and `measure_with` is the one command that measures it on the finished
run (`not_measured`). Nothing is made up for it: every statistic is null.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..._metric import Metric, reported_keys
from ..._records import SampleRecord
from ..._statistics.rater_agreement import agreement, judged_interval
from ..results.schema import JudgeAgreement, Results

REPEATS_TO_MEASURE = 3  # the --judge-repeats `measure_with` names for a key judged once by one judge
RUN = "RUN"  # `measure_with`'s place of the run folder (the folder results.json is in)
SHOWN_KEYS = 4  # the keys judged once a line names (the others counted)


def not_measured(metric: Metric, judges: int) -> JudgeAgreement:
    """The entry of a key of `metric` judged once by the run's `judges` (none of them repeated or compared):
    the scorings its headline is made of (several interchangeable judges averaged: each judge; else the one
    scoring, `repeat 1`), no statistic, and the rescoring that measures them: each judge alone (from the run's
    response cache) where there are several, else three repeats."""
    alone = judges > 1 and not metric.declares.judge_roles
    return {
        "measured": False,
        "raters": [f"judge {i + 1}" for i in range(judges)] if alone else ["repeat 1"],
        "averaged": judges if alone else 1,
        "examples": 0,
        "percent_agreement": None,
        "cohen_kappa": None,
        "krippendorff_alpha": None,
        "flipped": None,
        "missing_ratings": 0,
        "failed_ratings": 0,
        "failure": None,
        "ci95_judged": None,
        "measure_with": f"ragbench rescore {RUN} --judge-repeats {1 if alone else REPEATS_TO_MEASURE}",
    }


class JudgeRatings:
    """A task's raters' values, gathered sample by sample (in data order); `metrics` and the run's number of
    `judges` say which keys are judged (those without raters: `not_measured`)."""

    def __init__(self, metrics: Iterable[Metric] = (), judges: int = 0) -> None:
        self.unmeasured = {
            key: not_measured(metric, judges)
            for metric in metrics
            if "judge" in metric.declares.needs and judges
            for key in reported_keys(metric)
        }
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

    def section(self, iterations: int, seed: int, keys: Iterable[str]) -> dict[str, JudgeAgreement]:
        """The task's `judge_agreement`: per key of `keys` (those results.json has) that raters scored, its
        agreement and judged interval; per other judged key, that it is not measured (empty: no judged key)."""
        out: dict[str, JudgeAgreement] = {}
        for key in dict.fromkeys([*keys, *self.tables]):  # results.json's order
            if key in self.tables:
                out[key] = self._measured(key, iterations, seed)
            elif key in self.unmeasured:
                out[key] = self.unmeasured[key]
        return out

    def _measured(self, key: str, iterations: int, seed: int) -> JudgeAgreement:
        table = self.tables[key]
        interval = judged_interval(table, iterations, seed, self.averaged[key])
        failed = self.failed[key]
        return {
            "measured": True,
            "raters": self.raters[key],
            "averaged": self.averaged[key],
            **{k: v for k, v in agreement(table).items() if k != "raters"},  # type: ignore[typeddict-item]
            "missing_ratings": sum(v is None for row in table for v in row),
            "failed_ratings": sum(failed.values()),
            "failure": failed.most_common(1)[0][0] if failed else None,
            "ci95_judged": list(interval) if interval is not None else None,
        }


def judge_agreement_lines(results: Results, run: str | Path | None = None) -> list[str]:
    """One line per judged key with raters, then per task one line for its keys judged once, with the command
    that measures them (`run`: the run's folder, shown in place of RUN), for report.md, the console and the viewer."""
    lines = []
    for task, keys in (results.judge_agreement or {}).items():
        once: dict[str, list[str]] = {}  # measure_with -> the keys judged once
        for key, entry in keys.items():
            if not entry.get("measured", True):
                once.setdefault(entry.get("measure_with") or "", []).append(key)
                continue
            cell = (results.details.get(task) or {}).get(key)
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
                f"headline ({headline}) {number_text(cell.get('value') if cell else None)}, 95% CI with the judge's variance "
                f"{interval_text(entry['ci95_judged'])}, examples' alone {interval_text(cell.get('ci95') if cell else None)}"
                + "".join(f"; {note}" for note in notes if note)
            )
        lines += [not_measured_line(task, names, command, run) for command, names in once.items()]
    return lines


def not_measured_line(task: str, keys: list[str], command: str, run: str | Path | None) -> str:
    """A task's keys judged once: that their agreement is not measured, and the command that measures it."""
    shown = ", ".join(keys[:SHOWN_KEYS]) + (f" (+{len(keys) - SHOWN_KEYS})" if len(keys) > SHOWN_KEYS else "")
    if run is None:
        where = f" ({RUN}: the run's folder)"
    else:
        command, where = command.replace(RUN, shlex.quote(str(run)), 1), ""
    return (
        f"{task} {shown}: judged once, agreement not measured: `{command}`{where} measures it "
        "(`--judge ENGINE:MODEL` instead: another judge)"
    )


def agreement_cell(entry: Mapping[str, Any] | None) -> str:
    """A judged key's agreement as a column beside its value: its raters' agreement and alpha, or that it was
    judged once and not measured; "-" for a key no judge scores."""
    if entry is None:
        return "-"
    if not entry.get("measured", True):
        averaged = entry.get("averaged", 1)
        return "not measured (judged once)" if averaged == 1 else f"not measured ({averaged} judges averaged)"
    alpha = entry.get("krippendorff_alpha")
    return (
        f"{share_text(entry.get('percent_agreement'))} agree, alpha {'n/a' if alpha is None else f'{alpha:.2f}'} "
        f"({len(entry['raters'])} raters)"
    )


def interval_text(interval: list[float] | None) -> str:
    """An interval as "[low, high]" with four places, "n/a" where there is none."""
    if interval is None or len(interval) != 2 or None in interval:  # none (or a damaged one: read so)
        return "n/a"
    return f"[{interval[0]:.4f}, {interval[1]:.4f}]"


def share_text(value: float | None) -> str:
    """A share as a percentage, "n/a" where there is none."""
    return "n/a" if value is None else f"{value:.1%}"


def number_text(value: Any) -> str:
    """A value with four places, "n/a" where there is none."""
    return "n/a" if value is None else f"{value:.4f}"

"""What went wrong in a run, grouped so that a thousand alike failures read as one line.

A failed record is grouped by its cause's kind (the exception name, or "bad record"), with every
id that failed that way, and so is a metric that failed on an example (per metric and cause kind);
problems a system found outside any example (`System.report` errors, e.g.
bad lines of a predictions file) are grouped by their text with quoted values and numbers set aside.
`incomplete_reason` says in one line why a run is incomplete and what to do about it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, cast

from ..._metric import InvalidScore, Metric, reported_keys, typed_value
from ..._records import SampleRecord
from .schema import Counted, Failure, KeyDetails, Results, reported_errors

SHOWN_IDS = 5  # ids shown per group on the console and in report.md (results.json keeps up to KEPT_IDS)
KEPT_IDS = 1000
_KIND = re.compile(r"^([A-Za-z_][\w.]*)(?=: )")
_VARIABLE = re.compile(r"'[^']*'|\"[^\"]*\"|\d+")


@dataclass
class AggregateFailure:
    """A key's value (or its interval) that could not be computed: the metric's `aggregate` raised or
    returned what is not a finite number, or the values overflow. A failure of the metric."""

    metric: str
    key: str  # the reported key, with its slice where it failed there ("match by kind=a")
    message: str  # `Kind: what happened`
    traceback: str | None = None


def cause_kind(error: str) -> str:
    """`MissingPrediction: ... id '9003'` -> `MissingPrediction`; `bad record: f:3: ...` -> `bad record`."""
    first = str(error).splitlines()[0] if error else ""
    if first.startswith("bad record: "):
        return "bad record"
    match = _KIND.match(first)
    return match.group(1) if match else first[:120]


def record_label(record: SampleRecord) -> str:
    """An example's id, or a bad record's position in the task's data."""
    return record.id if record.id is not None else f"record #{record.index}"


class _Group(TypedDict):
    count: int
    ids: list[str]
    example: str


class FailureGroup(_Group, total=False):
    """A cause's group as it fills (`Failure` without its cause, which goes first when it is written)."""

    traceback: str
    metric: str
    corpus: bool
    keys: list[str]


class FailureGroups:
    """Failed records grouped by cause kind, filled record by record (in data order: a group's ids, example and
    traceback are its first records'); then the metric failures of `metrics` (see `metric_failures`) grouped
    by metric and cause kind. Holds a group's count and up to KEPT_IDS ids, never the records."""

    def __init__(self, metrics: Sequence[Metric] = ()) -> None:
        self.metrics = metrics
        self.records: dict[str, FailureGroup] = {}
        self.metric_groups: dict[str, FailureGroup] = {}

    def add(self, record: SampleRecord) -> None:
        if record.error is not None:
            _add(self.records, cause_kind(str(record.error)), str(record.error), record, record.traceback)
        tracebacks = record.score_tracebacks
        for metric, message in metric_failures(record, self.metrics).items():
            _add(
                self.metric_groups, f"metric {metric}: {cause_kind(message)}", message, record, tracebacks.get(metric)
            )["metric"] = metric

    def groups(
        self, details: Mapping[str, KeyDetails] | None = None, not_computed: Sequence[AggregateFailure] = ()
    ) -> list[Failure]:
        """The groups, most frequent first: cause, count, ids (up to KEPT_IDS), the first record's whole message
        as an example and the first traceback of the cause (a system or a metric that raised); then the metric
        failures, each group with its "metric", and a corpus metric that failed (its entries in `details` hold
        the error) as a group without ids, as are the values of `not_computed` (each key's, with its "keys")."""
        failed_metrics = dict(self.metric_groups)
        for metric in self.metrics:  # a corpus metric's error is in each of its entries
            entries = [(details or {}).get(key) for key in reported_keys(metric, corpus=True)]
            for error in {entry["error"] for entry in entries if entry and entry.get("error")}:
                failed_metrics[f"metric {metric.name}: {cause_kind(error)}"] = {
                    "count": 1,
                    "ids": [],
                    "example": error[:300],
                    "metric": metric.name,
                    "corpus": True,
                }
        for failure in not_computed:
            group = failed_metrics.setdefault(
                f"metric {failure.metric}: aggregate: {cause_kind(failure.message)}",
                {
                    "count": 0,
                    "ids": [],
                    "example": f"{failure.key}: {failure.message}"[:300],
                    "metric": failure.metric,
                    "keys": [],
                },
            )
            group["count"] += 1
            group["keys"].append(failure.key)
            if failure.traceback and "traceback" not in group:
                group["traceback"] = failure.traceback
        ordered = sorted(self.records.items(), key=lambda item: -item[1]["count"])
        ordered += sorted(failed_metrics.items(), key=lambda item: -item[1]["count"])
        return [cast(Failure, {"cause": cause, **group}) for cause, group in ordered]  # the cause first


def _add(
    groups: dict[str, FailureGroup], cause: str, message: str, record: SampleRecord, traceback: str | None
) -> FailureGroup:
    group = groups.setdefault(cause, {"count": 0, "ids": [], "example": (message.splitlines() or [""])[0][:300]})
    group["count"] += 1
    if len(group["ids"]) < KEPT_IDS:
        group["ids"].append(record_label(record))
    if traceback and "traceback" not in group:
        group["traceback"] = traceback
    return group


def metric_failures(record: SampleRecord, metrics: Sequence[Metric]) -> dict[str, str]:
    """Metric name -> why it failed on this record, when the example itself did not fail: the error it
    raised or the value it returned that is not a score (`score_errors`), or a saved value that is not
    a score or is not there (a sample written by an older ragbench, e.g. a numpy scalar saved as a string,
    or by an older version of the metric, without a key it reports now)."""
    if record.error is not None:
        return {}
    failed = {str(name): str(message) for name, message in record.score_errors.items()}
    scores = record.scores
    for metric in metrics:
        for reported, key in reported_keys(metric).items():
            if metric.name in failed:
                continue
            if reported not in scores:
                failed[metric.name] = f"InvalidScore: the sample has no value for key '{reported}'"
                continue
            try:
                typed_value(metric, key, scores[reported])
            except InvalidScore as exc:
                failed[metric.name] = f"InvalidScore: saved {exc}"
    return failed


def metric_failed(results: Results) -> bool:
    """Whether a run's results count a metric failure in any task."""
    return any(counts.get("metric_failures") for counts in results.counts.values())


def metric_failure_count(groups: list[Failure]) -> int:
    """Metric failures among `FailureGroups.groups`: (example, metric) pairs, and failed corpus metrics."""
    return sum(group["count"] for group in groups if "metric" in group)


def group_messages(messages: list[str]) -> list[tuple[int, str]]:
    """Alike messages (equal but for quoted values and numbers) as (count, first message)."""
    counts: Counter[str] = Counter()
    first: dict[str, str] = {}
    for message in messages:
        shape = _VARIABLE.sub("_", message)
        counts[shape] += 1
        first.setdefault(shape, message)
    return [(count, first[shape]) for shape, count in counts.most_common()]


def id_list(ids: list[str], count: int) -> str:
    """`9003, 9005, 9007, 9009, 9011 ... (+15)`."""
    shown = ", ".join(ids[:SHOWN_IDS])
    return shown + (f" ... (+{count - SHOWN_IDS})" if count > SHOWN_IDS else "")


def failure_group_line(task: str, entry: Mapping[str, Any]) -> str:
    """`popqa: 20 x MissingPrediction: 9003, 9005, ... (+15) - e.g. <the first message>`."""
    line = f"{task}: {entry['count']} x {entry['cause']}"
    if entry.get("ids"):
        line += f": {id_list(entry['ids'], entry['count'])}"
    if entry.get("example") and entry["example"] != entry["cause"]:
        line += f" - e.g. {entry['example']}"
    return line


def message_lines(task: str, messages: list[str]) -> list[str]:
    return [
        f"{task}: {message}" + (f" (+{count - 1} alike)" if count > 1 else "")
        for count, message in group_messages(messages)
    ]


def incomplete_reason(results: Results) -> str:
    """Why a run is incomplete, task by task, and what each kind of problem needs."""
    parts, hints = [], []
    for task, task_counts in results.counts.items():
        counts: Mapping[str, Any] = task_counts
        groups = (results.failures or {}).get(task, [])
        causes = ", ".join(g["cause"] for g in groups if g["cause"] != "bad record" and "metric" not in g)
        metric_causes = ", ".join(g["cause"] for g in groups if "metric" in g)
        found = [
            f"{counts[key]} {label}"
            for key, label in (
                ("failed", f"failed example(s) ({causes})"),
                ("metric_failures", f"metric failure(s) ({metric_causes})"),
                ("bad_records", "bad record(s) in the data"),
                ("missing", "record(s) never finished"),
            )
            if counts.get(key)
        ]
        if not counts.get("records"):
            found.append("no records at all (an empty data file, or none in the selected split)")
            hints.append("check the task's --data file and options")
        problems = len(reported_errors((results.system_reports or {}).get(task)))
        if problems:
            found.append(f"{problems} problem(s) in the system's input (e.g. its predictions file)")
        if found:
            parts.append(f"{task}: " + ", ".join(found))
        if counts.get("failed") or counts.get("missing"):
            hints.append("--resume tries the failed examples again")
        if any("metric" in g and "keys" not in g for g in groups) or (counts.get("metric_failures") and not groups):
            hints.append("--resume scores the examples whose metrics failed again (the system is not run again)")
        if any(g.get("keys") for g in groups):
            hints.append(
                "a metric's aggregate failed (see its traceback in report.md): fix the metric, then --resume "
                "computes its values again"
            )
        if counts.get("bad_records") or problems:
            hints.append("fix the input file(s) named above and run again")
    reason = "; ".join(parts) or "see results.json"
    return reason + ("; " + "; ".join(dict.fromkeys(hints)) if hints else "")


class CountedEvents:
    """Per metric and event (`MetricDeclaration.counters`): how often it happened, in how many examples, and what it
    means - the failures a score folds in as upstream's rule says, shown rather than hidden. Only of the
    examples that are scored: a failed one (--strict-infra) folds its events into no number shown."""

    def __init__(self, metrics: list[Any]) -> None:
        self.meanings = {m.name: m.declares.counters for m in metrics}
        self.tallies: dict[str, dict[str, Counted]] = {}

    def add(self, record: SampleRecord) -> None:
        if record.error is not None:
            return
        for metric, events in record.counted.items():
            for event, n in events.items():
                entry = self.tallies.setdefault(metric, {}).setdefault(
                    event, {"count": 0, "examples": 0, "meaning": self.meanings.get(metric, {}).get(event, event)}
                )
                entry["count"] += n
                entry["examples"] += 1


def counted_lines(results: Results) -> list[str]:
    """`crag_t3: crag: 3 judge replies that did not parse, scored ... (judge_unparsed, in 3 of 3 scored examples)`."""
    lines = []
    for task, metrics in (results.counted or {}).items():
        scored = results.counts[task]["scored"] if task in results.counts else "?"
        for metric, events in metrics.items():
            lines += [
                f"{task}: {metric}: {e['count']} {e['meaning']} ({event}, in {e['examples']} of {scored} "
                "scored examples)"
                for event, e in events.items()
            ]
    return lines


def format_lines(results: Results) -> list[str]:
    """A warning per format a system's outputs did not always follow (`System.format_adherence`)."""
    system = results.config.get("system", "the system")
    lines = []
    for task, checks in (results.format_adherence or {}).items():
        for check in checks:
            if check["of"] and check["followed"] < check["of"]:
                lines.append(
                    f"{task}: warning: {check['of'] - check['followed']} of {check['of']} outputs "
                    f"({1 - check['followed'] / check['of']:.0%}) did not follow {system}'s format "
                    f"({check['format']}); {check['fix']}"
                )
    return lines


def repair_lines(results: Results) -> list[str]:
    """Checkpoint lines a stopped run left unreadable, dropped when the samples were rewritten."""
    return [
        f"{task}: {len(errors)} unreadable line(s) of the checkpoint dropped (a run stopped mid-write; "
        f"their examples were run again): {errors[0]}"
        for task, errors in (results.checkpoint_repairs or {}).items()
    ]

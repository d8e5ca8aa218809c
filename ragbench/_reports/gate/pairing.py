"""How `ragbench gate` pairs the examples of a candidate run with its baseline's, per task and metric key, and what
becomes of those that do not pair: none is dropped unsaid, each is counted and named by reason.

Per key, an example the baseline has is looked up in the candidate by id:

- a value in both runs: a pair, as it is;
- failed in one run (the example failed, or the metric failed on it) and a value in the other: the failed side
  scores the key's worst value (the end of its range in the worse direction: 0 for EM, F1, accuracy). A failure
  is a regression the gate must see; an example the baseline failed and the candidate answers is the candidate's
  gain. A key whose range is open at its worse end has no worst value: its failed examples are left out of its
  test (the task's `examples failed` row still tests them);
- an example the baseline has and the candidate has no line for: failed in the candidate where the candidate did
  not reach all its examples (results.json `counts.missing`), else not among the candidate's examples (another
  --limit or data file): left out. An example only the candidate has is left out;
- not scorable (a value of none) in either run, failed in both, or a bad record (data that could not be read) in
  either: left out.

Per task `examples failed` is tested too (lower is better): 1 where the example failed (or is missing, as above) in
a run, 0 where it ran, over the examples both runs have or the candidate was to reach.

The same id must be the same example: where the examples' data differ between the runs (`example_sha256`), the gate
refuses (a `ConfigError`), as it refuses a task the candidate did not run and keys judged differently in the runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from ..._errors import ConfigError
from ..compare.like_for_like import MetricClass, judge_differences
from ..compare.run_scores import score_value
from ..results.finished_run import FinishedRun
from ..results.schema import KeyDetails, Results
from .judge_error import KeyJudge, key_judge, task_judged_keys

FAILED_KEY = "examples failed"  # the task's row of failed examples (no metric key has a space)
SHOWN_IDS = 5  # the ids a reason names (the others counted)


class ExampleState(Enum):
    VALUE = "value"
    NONE = "not scorable"
    FAILED = "failed"
    ABSENT = "absent"
    BAD = "bad record"


@dataclass(frozen=True)
class Seen:
    """One example of a run as the gate reads it: whether it failed or is a bad record, its values (None: not
    scorable; a key missing: its metric failed on it) and the digest of its data."""

    failed: bool
    bad: bool
    scores: Mapping[str, float | None]
    digest: str | None

    def state(self, key: str) -> ExampleState:
        if self.bad:
            return ExampleState.BAD
        if self.failed:
            return ExampleState.FAILED
        if key not in self.scores:
            return ExampleState.FAILED  # the metric failed on it, or saved no number
        return ExampleState.NONE if self.scores[key] is None else ExampleState.VALUE


@dataclass
class Reasons:
    """Examples by what became of them: reason -> their ids, in the baseline's order."""

    ids: dict[str, list[str]] = field(default_factory=dict)

    def add(self, reason: str, example_id: str) -> None:
        self.ids.setdefault(reason, []).append(example_id)

    def lines(self) -> list[str]:
        """Each reason with its count and the first SHOWN_IDS ids."""
        return [f"{len(ids)} {reason} ({named(ids)})" for reason, ids in self.ids.items()]

    def count(self) -> int:
        return sum(len(ids) for ids in self.ids.values())


def named(ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOWN_IDS])
    return shown + (f", +{len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")


@dataclass
class PairedKey:
    """A gated key of a task: the paired values of its examples, those scored worst and those left out (by
    reason), and its judge where one scores it."""

    task: str
    key: str
    higher_is_better: bool
    baseline: np.ndarray
    candidate: np.ndarray
    scored_worst: Reasons
    left_out: Reasons
    judge: KeyJudge | None = None

    @property
    def worse(self) -> np.ndarray:
        """Per pair, how much worse the candidate is (positive: worse) in the key's direction."""
        worse: np.ndarray = self.baseline - self.candidate if self.higher_is_better else self.candidate - self.baseline
        return worse


@dataclass
class PairedRuns:
    """Every gated key of every task of the baseline, paired; lines about what was not gated."""

    keys: list[PairedKey]
    notes: list[str]


def paired_runs(
    baseline: FinishedRun, candidate: FinishedRun, wanted: list[str] | None, metric_class: MetricClass | None
) -> PairedRuns:
    """The runs' examples paired per task and key (`wanted`: the keys to gate, None: every key with a better
    direction both runs score); `ConfigError` where the runs cannot be gated against each other."""
    tasks = list(baseline.results.results)
    missing = [task for task in tasks if task not in candidate.results.results]
    if missing:
        raise ConfigError(
            f"gate: {candidate.path} has no results for {', '.join(missing)}, which the baseline {baseline.path} has; "
            "run the candidate on the baseline's tasks"
        )
    notes = [
        f"{task}: only in the candidate, not gated (the baseline has no results for it)"
        for task in candidate.results.results
        if task not in baseline.results.results
    ]
    chosen = {task: _gated_keys(baseline.results, candidate.results, task, wanted, notes) for task in tasks}
    _known(wanted, chosen)
    _judged_alike(baseline.results, candidate.results, chosen, metric_class)
    keys: list[PairedKey] = []
    for task, task_keys in chosen.items():
        ours, theirs = _read(baseline, task, task_keys), _read(candidate, task, task_keys)
        _same_examples(task, ours, theirs, baseline, candidate)
        unreached = candidate.results.counts[task]["missing"] > 0
        judged = task_judged_keys(baseline.results, candidate.results, task, metric_class)
        for key, higher_is_better, worst in task_keys:
            paired = _pair(task, key, higher_is_better, worst, ours, theirs, unreached)
            if judged is None or key in judged:
                paired.judge = key_judge(baseline.results, candidate.results, task, key)
            keys.append(paired)
        keys.append(_failures(task, ours, theirs, unreached))
    return PairedRuns(keys, notes)


def _gated_keys(
    baseline: Results, candidate: Results, task: str, wanted: list[str] | None, notes: list[str]
) -> list[tuple[str, bool, float | None]]:
    """(key, higher is better, worst value) of each key of `task` to gate, in the baseline's order."""
    ours, theirs = baseline.details.get(task, {}), candidate.details.get(task, {})
    out, one_run, undirected = [], [], []
    for key, entry in ours.items():
        if entry.get("corpus") or (wanted is not None and key not in wanted):
            continue
        other = theirs.get(key)
        if other is None or other.get("corpus"):
            one_run.append(key)
        elif entry.get("higher_is_better") is None:
            undirected.append(key)
        else:
            out.append((key, bool(entry["higher_is_better"]), worst_value(entry)))
    if wanted is not None and (one_run or undirected):
        why = [f"{', '.join(one_run)} scored in the baseline only"] if one_run else []
        why += [f"{', '.join(undirected)} has no better direction (a descriptive figure)"] if undirected else []
        raise ConfigError(f"gate --metrics: on {task}, {'; '.join(why)}; gate keys both runs score, better one way")
    if one_run:
        notes.append(f"{task}: {', '.join(one_run)} scored in the baseline only: not gated")
    if undirected:
        notes.append(f"{task}: {', '.join(undirected)} better neither way (descriptive): not gated")
    return out


def worst_value(entry: KeyDetails) -> float | None:
    """The key's worst value: the end of its range in its worse direction; None where that end is open."""
    bounds = entry.get("range")
    if not bounds or len(bounds) != 2:
        return None
    end = bounds[0] if entry.get("higher_is_better") else bounds[1]
    return None if end is None else float(end)


def _known(wanted: list[str] | None, chosen: Mapping[str, list[tuple[str, bool, float | None]]]) -> None:
    """A `ConfigError` where a key of --metrics is in no task's gated keys."""
    found = {key for keys in chosen.values() for key, _, _ in keys}
    unknown = [key for key in wanted or [] if key not in found]
    if unknown:
        raise ConfigError(
            f"gate --metrics: {', '.join(unknown)} is no key the baseline scores per example "
            f"({', '.join(sorted(found)) or 'none'})"
        )


def _judged_alike(
    baseline: Results,
    candidate: Results,
    chosen: Mapping[str, list[tuple[str, bool, float | None]]],
    metric_class: MetricClass | None,
) -> None:
    """A `ConfigError` where a gated key is judged, and the runs' judges differ: a judge changed is no regression."""
    reasons = judge_differences(baseline.config, candidate.config)
    if not reasons:
        return
    judged = []
    for task, keys in chosen.items():
        found = task_judged_keys(baseline, candidate, task, metric_class)
        judged += [f"{task} {key}" for key, _, _ in keys if found is None or key in found]
    if judged:
        raise ConfigError(
            f"gate: {', '.join(judged)} judged differently in the two runs ({'; '.join(reasons)}): a judge's change "
            "is no regression of the system; judge one run again as the other (`ragbench rescore RUN --judge ...`) "
            "or leave the judged keys out (--metrics)"
        )


def _read(run: FinishedRun, task: str, keys: Iterable[tuple[str, bool, float | None]]) -> dict[str, Seen]:
    """The task's examples of `run` by id (an id read again: its later line), with the values of `keys`."""
    names = [key for key, _, _ in keys]
    examples: dict[str, Seen] = {}
    for record in run.records(task, has_text=False, why="the gate pairs the per-example scores"):
        if record.id is None:
            continue
        scores: dict[str, float | None] = {}
        for key in names:
            if key in record.scores and record.scores[key] is None:
                scores[key] = None
            elif (value := score_value(record.scores.get(key))) is not None:
                scores[key] = value
        examples[record.id] = Seen(record.error is not None, record.bad_record, scores, record.example_sha256)
    return examples


def _same_examples(
    task: str, ours: Mapping[str, Seen], theirs: Mapping[str, Seen], baseline: FinishedRun, candidate: FinishedRun
) -> None:
    changed = [
        example_id
        for example_id, seen in ours.items()
        if (other := theirs.get(example_id)) is not None
        and seen.digest is not None
        and other.digest is not None
        and seen.digest != other.digest
    ]
    if changed:
        raise ConfigError(
            f"gate: {task}: {len(changed)} example(s) of the same id hold other data in the two runs ({named(changed)}):"
            f" the gate pairs the same examples; run {candidate.path} on the data {baseline.path} was run on"
        )


def _pair(
    task: str,
    key: str,
    higher_is_better: bool,
    worst: float | None,
    ours: Mapping[str, Seen],
    theirs: Mapping[str, Seen],
    unreached: bool,
) -> PairedKey:
    paired = PairedKey(task, key, higher_is_better, np.empty(0), np.empty(0), Reasons(), Reasons())
    a: list[float] = []
    b: list[float] = []
    for example_id, seen in ours.items():
        other = theirs.get(example_id)
        if other is None and not unreached:
            paired.left_out.add("not among the candidate's examples", example_id)
            continue
        pair = _values(paired, worst, example_id, seen, other)
        if pair is not None:
            a.append(pair[0])
            b.append(pair[1])
    for example_id in theirs:
        if example_id not in ours:
            paired.left_out.add("only in the candidate", example_id)
    paired.baseline, paired.candidate = np.array(a, dtype=float), np.array(b, dtype=float)
    return paired


def _values(
    paired: PairedKey, worst: float | None, example_id: str, seen: Seen, other: Seen | None
) -> tuple[float, float] | None:
    """One example's pair of values (baseline, candidate) under the rules of the module's docstring, or None (left
    out, its reason added to `paired`); `other` None: the candidate did not reach it."""
    key = paired.key
    mine, yours = seen.state(key), ExampleState.ABSENT if other is None else other.state(key)
    if ExampleState.BAD in (mine, yours):
        paired.left_out.add("bad record(s)", example_id)
        return None
    if mine is ExampleState.VALUE and yours is ExampleState.VALUE:
        return _number(seen, key), _number(other, key)
    if mine is ExampleState.VALUE and yours in (ExampleState.FAILED, ExampleState.ABSENT):
        reason = "failed in the candidate" if yours is ExampleState.FAILED else "not reached by the candidate"
        return _worst_for(paired, worst, reason, example_id, (_number(seen, key), worst))
    if mine is ExampleState.FAILED and yours is ExampleState.VALUE:
        return _worst_for(paired, worst, "failed in the baseline", example_id, (worst, _number(other, key)))
    if ExampleState.NONE in (mine, yours):
        side = "either run" if mine is yours else "the baseline" if mine is ExampleState.NONE else "the candidate"
        paired.left_out.add(f"not scorable in {side}", example_id)
        return None
    paired.left_out.add("failed in both runs", example_id)
    return None


def _worst_for(
    paired: PairedKey, worst: float | None, reason: str, example_id: str, pair: tuple[float | None, float | None]
) -> tuple[float, float] | None:
    """`pair` (a side of it the worst value) counted under `reason`; left out where the key has no worst value."""
    if worst is None or pair[0] is None or pair[1] is None:
        paired.left_out.add(f"{reason}, no worst value to score", example_id)
        return None
    paired.scored_worst.add(reason, example_id)
    return pair[0], pair[1]


def _number(seen: Seen | None, key: str) -> float:
    """The value of a key whose state is VALUE."""
    value = None if seen is None else seen.scores[key]
    assert value is not None, f"{key}: no value to pair"
    return value


def _failures(task: str, ours: Mapping[str, Seen], theirs: Mapping[str, Seen], unreached: bool) -> PairedKey:
    """The task's `examples failed` row: 1 where a run failed the example (the candidate also where it is missing
    and did not reach every example), 0 where it ran."""
    a: list[float] = []
    b: list[float] = []
    left_out = Reasons()
    for example_id, seen in ours.items():
        other = theirs.get(example_id)
        if other is None and not unreached:
            left_out.add("not among the candidate's examples", example_id)
        elif seen.bad or (other is not None and other.bad):
            left_out.add("bad record(s)", example_id)
        else:
            a.append(float(seen.failed))
            b.append(float(other is None or other.failed))
    for example_id in theirs:
        if example_id not in ours:
            left_out.add("only in the candidate", example_id)
    return PairedKey(task, FAILED_KEY, False, np.array(a), np.array(b), Reasons(), left_out)

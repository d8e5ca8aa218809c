"""A run's estimate (`ragbench estimate`, made by ragbench._run.estimate.pilot_run from the figures of
`estimate_figures`): each task's (`task_estimate`), the wall time left (`wall_left`), and how it is shown: the
console's lines (`estimate_lines`) and `--json` (`as_json`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TypedDict

from .._storage.run_record import AttemptCost
from .estimate_figures import SECONDS, EstimatedTotal, Totals

COUNTS = {  # figure: how it is shown
    "llm_calls": "LLM calls (system)",
    "prompt_tokens": "prompt tokens (system)",
    "completion_tokens": "output tokens (system)",
    "searches": "searches",
}


@dataclass(frozen=True)
class TaskEstimate:
    name: str
    records: int  # of the run
    done: int  # finished examples saved (before the pilot: `done_before`)
    done_before: int
    totals: dict[str, EstimatedTotal]
    paid_before: dict[str, float]
    paid: dict[str, float]
    pilot_for: int | None = None  # examples the dollars' point needs to be within 10% (None: cannot tell)
    beyond: str | None = None  # where the examples left are longer than any the pilot ran: the line saying so
    measured: int | None = None  # the examples estimated from, where not all done are (a sequenced pilot's drawn)


@dataclass(frozen=True)
class RunEstimate:
    """The estimate of a run (`totals`, summed over its tasks), what was paid before and by the pilot, the pilot's
    wall time, and what the estimate cannot know (`unknowns`)."""

    run_dir: str
    tasks: list[TaskEstimate]
    totals: dict[str, EstimatedTotal]
    wall: EstimatedTotal | None  # seconds the rest of the run takes; None: no attempt timed
    unknowns: list[str] = field(default_factory=list)
    pilot_ran: int = 0
    prompt_lengths: str = ""  # how the examples left are taken to be as long as they are (`prompt_lengths`)

    @property
    def records(self) -> int:
        return sum(task.records for task in self.tasks)

    @property
    def done(self) -> int:
        return sum(task.done for task in self.tasks)

    def paid(self, before: bool = False) -> dict[str, float]:
        out: dict[str, float] = {}
        for task in self.tasks:
            for key, value in (task.paid_before if before else task.paid).items():
                out[key] = out.get(key, 0.0) + value
        return out


def task_estimate(
    name: str, records: int, before: tuple[Totals, int], now: tuple[Totals, int], measured: int | None = None
) -> TaskEstimate:
    """A task of `records` records estimated from its saved samples' totals and finished examples `now`, beside
    those `before` the pilot ran; `measured`: the examples of them it is estimated from, where not all are."""
    totals, done = now
    remaining = max(0, records - done)
    far = totals.beyond_met(remaining)
    beyond = None
    if far is not None:
        beyond = (
            f"{name}: the examples left are {far[0]:,.0f} tokens long on average (their own text), longer "
            f"than any the pilot ran ({far[1]:,.0f}): their prompt tokens and dollars follow a line read from shorter examples, as "
            "far as it holds; a larger pilot (--pilot) meets some of them"
        )
    return TaskEstimate(
        name,
        records,
        done,
        before[1],
        totals.estimate(remaining),
        before[0].paid,
        totals.paid,
        totals.pilot_for(records),
        beyond,
        measured,
    )


def wall_left(estimate: RunEstimate, attempt: AttemptCost | None, inflight: int) -> EstimatedTotal | None:
    """The wall time of the rest of the run: the examples' seconds still to come (`SECONDS`: each example's own,
    from its start to its sample) over the concurrency the last attempt reached (its examples' seconds per second
    of its wall time: `attempt`, run.json's last). That attempt ran `slots` = min(its examples, `inflight`: the
    examples --max-inflight runs at once) at once, the rest runs up to min(examples left, `inflight`): `high` assumes
    no more concurrency than the attempt's, `low` that it grows in proportion to the slots, the point the geometric
    mean of the two. None where no attempt was timed."""
    seconds = estimate.totals.get(SECONDS)
    if attempt is None or seconds is None or not attempt.get("examples") or not attempt.get("wall_seconds"):
        return None
    spent = estimate.paid().get(SECONDS, 0.0)
    per_example = spent / max(1, estimate.done)
    concurrency = max(1e-9, per_example * attempt["examples"] / attempt["wall_seconds"])
    slots = min(attempt["examples"], inflight)
    more = max(1.0, min(max(1, estimate.records - estimate.done), inflight) / slots)
    high = None if seconds.high is None else (seconds.high - spent) / concurrency
    return EstimatedTotal(
        (seconds.point - spent) / (concurrency * math.sqrt(more)), (seconds.low - spent) / (concurrency * more), high
    )


def varying_steps(totals: dict[str, EstimatedTotal]) -> list[str]:
    """The step figures (LLM calls, searches) whose per-example count varied in the examples that ran (an interval
    above its point; one that saw no spread ends at its point, ragbench._cost.estimate_figures.extrapolated)."""
    return [key for key in ("llm_calls", "searches") if key in totals and totals[key].high != totals[key].point]


def shown(value: float, money: bool) -> str:
    return f"${value:,.4f}" if money else f"{value:,.0f}"


def interval_text(interval: EstimatedTotal, money: bool = False) -> str:
    """The point and its interval; a figure every example that ran had the same value of (`each`: fixed by design,
    as vanilla's one LLM call) without one: that value an example, fewer only where the response cache answers."""
    if interval.each is not None:
        return f"{shown(interval.point, money)}  ({shown(interval.each, money)} an example in every example that ran)"
    high = "unbounded" if interval.high is None else shown(interval.high, money)
    return f"{shown(interval.point, money)}  [95%: {shown(interval.low, money)} .. {high}]"


def figure_name(key: str) -> str | None:
    """How a figure of the estimate is named, None for one not shown (cached calls: nothing to pay)."""
    if key in COUNTS:
        return COUNTS[key]
    if key.startswith("usd:"):
        return f"dollars, {key.removeprefix('usd:').replace('model', 'system model', 1)}"
    if key.startswith("judge:") and not key.endswith("cached_calls"):
        metric, _, what = key.partition(" ")
        return f"{what.replace('_', ' ')} ({metric})"
    return None


def reach(task: TaskEstimate) -> float:
    """How far from its point a task's dollars' interval reaches, as a share of the point (the widest of its dollar
    figures; inf: unbounded)."""
    shares = [
        max(each.point - each.low, math.inf if each.high is None else each.high - each.point) / each.point
        for key, each in task.totals.items()
        if key.startswith("usd:") and each.point > 0
    ]
    return max(shares, default=0.0)


def precision_line(task: TaskEstimate) -> str | None:
    """Where a task's dollars may be off by more than 10% (their interval reaches beyond it, or their spread asks
    for a larger pilot): that the point is not to be taken as within 10%, and what runs the pilot that puts it so."""
    far = reach(task)
    wide = "unbounded" if far == math.inf else f"{far:.0%}"
    measured = task.done if task.measured is None else task.measured
    if task.pilot_for is not None and task.pilot_for > measured:
        return (
            f"{task.name}: the dollars within 10% of their point (95%) need about {task.pilot_for} of its examples run, "
            f"{measured} have: until they ran the point is within 10% of what the run costs only by chance (the "
            f"interval reaches {wide} from it); --precision 10% runs them (so does --pilot {task.pilot_for}; a "
            "pilot holds the smaller ones)"
        )
    if far > 0.10:
        return (
            f"{task.name}: the dollars' interval reaches {wide} from their point: the point is within 10% of what the "
            "run costs only by chance; a larger pilot (--pilot) narrows it"
        )
    return None


def estimate_lines(estimate: RunEstimate) -> list[str]:
    lines = [
        f"examples: {estimate.records} in the run, {estimate.done} done "
        f"({estimate.pilot_ran} by this pilot), {estimate.records - estimate.done} left",
    ]
    paid_before, paid = estimate.paid(before=True), estimate.paid()
    for key, interval in estimate.totals.items():
        name = figure_name(key)
        if name is None:
            continue
        money = key.startswith("usd:")
        lines.append(
            f"{name}: {interval_text(interval, money)}; paid already {shown(paid.get(key, 0.0), money)} "
            f"(before this pilot {shown(paid_before.get(key, 0.0), money)})"
        )
    if estimate.wall is None:
        lines.append("wall time left: unknown (no attempt of this run was timed)")
    else:
        lines.append(f"wall time left, seconds: {interval_text(estimate.wall)}")
    lines.extend(line for line in map(precision_line, estimate.tasks) if line)
    lines.append(estimate.prompt_lengths)
    lines.extend(f"cannot know: {line}" for line in estimate.unknowns)
    return lines


class _EstimatedInterval(TypedDict):
    point: float
    low: float
    high: float | None  # None: unbounded


class EstimatedInterval(_EstimatedInterval, total=False):
    each: float  # the same in every example that ran


class EstimateJson(TypedDict):
    """`ragbench estimate --json`."""

    run_dir: str
    records: int
    done: int
    pilot_examples: int
    totals: dict[str, EstimatedInterval | None]
    paid_before: dict[str, float]
    paid: dict[str, float]
    wall_seconds_left: EstimatedInterval | None
    pilot_for_10_percent: dict[str, int | None]
    unknowns: list[str]
    prompt_lengths: str


def as_json(estimate: RunEstimate) -> EstimateJson:
    """The estimate as JSON (`ragbench estimate --json`)."""

    def interval(value: EstimatedTotal | None) -> EstimatedInterval | None:
        if value is None:
            return None
        out: EstimatedInterval = {"point": value.point, "low": value.low, "high": value.high}
        if value.each is not None:
            out["each"] = value.each
        return out

    return {
        "run_dir": estimate.run_dir,
        "records": estimate.records,
        "done": estimate.done,
        "pilot_examples": estimate.pilot_ran,
        "totals": {key: interval(value) for key, value in estimate.totals.items()},
        "paid_before": estimate.paid(before=True),
        "paid": estimate.paid(),
        "wall_seconds_left": interval(estimate.wall),
        "pilot_for_10_percent": {task.name: task.pilot_for for task in estimate.tasks},
        "unknowns": estimate.unknowns,
        "prompt_lengths": estimate.prompt_lengths,
    }

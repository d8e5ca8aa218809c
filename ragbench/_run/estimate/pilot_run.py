"""A run's cost before it is paid (`ragbench estimate`): a pilot of a few of its examples run for real, in the run's
own folder, and the rest of the run estimated from them (ragbench._cost: the pilot's size and draw, `pilot`; the
figures, `estimate_figures`; the estimate and how it is shown, `run_estimate`).

The pilot IS part of the run: it runs a simple random sample of each task's records (`PilotSize`: 5% of them by
default, at least 3 per task: the first records of an order drawn from the run's --seed and the task's name, so a
larger pilot of the run holds a smaller one, `--precision` grows it, `grown_pilot`) with the run's own options, in
the run's own folder (a fresh run, or the unfinished run there, continued), and then stops as an interrupted run stops: run.json says not finished, the pilot's attempt
is recorded (marked interrupted) and counted in the run's cost, and `--resume` with the same options runs the other
records only. A random sample, not the first records nor every k-th one, keeps a task sorted by difficulty or whose
kinds of question come in a cycle from biasing the estimate, and is what the interval assumes. A run folder that holds a finished run is estimated from its samples and runs nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace

from ..._config.limits import examples_in_flight
from ..._config.run_config import RunConfig
from ..._cost.estimate_figures import Totals, example_figures, summed
from ..._cost.estimate_tokens import input_lengths, model_counter, prompt_lengths
from ..._cost.pilot import Pilot, PilotEnded, PilotSize
from ..._cost.prices import ModelPrices, model_urls, run_prices
from ..._cost.run_estimate import RunEstimate, task_estimate, varying_steps, wall_left
from ..._errors import RecordError
from ..._records import read_samples
from ..._registry import Registry
from ..._storage.checkpoint import checkpoint_key
from ..._task.protocols import Sequenced
from ..._types import Example
from ..._values.ceiling import MAX_STEPS
from ..modes.attempt import FRESH, RESUMED, Attempt
from ..modes.planned_run import PlannedRun, finished_keys, system_of
from ..plan.planned_task import PlannedTask
from ..plugin_values import task_records
from ..services import held_services

NOTHING_RAN = "no example of the run has run yet: there is nothing to estimate from (a pilot, --pilot 5%, runs some)"


def limited_records(planned: PlannedTask, limit: int | None) -> Iterator[Example | RecordError]:
    """A task's records in the run (its --limit applied)."""
    return itertools.islice(task_records(planned.task), limit)


def count_records(planned: PlannedTask, limit: int | None) -> int:
    """A task's records in the run, read once."""
    return sum(1 for _ in limited_records(planned, limit))


def read_totals(
    run: PlannedRun,
    planned: PlannedTask,
    prices: ModelPrices,
    lengths: dict[str, int] | None = None,
    drawn: frozenset[int] | None = None,
) -> tuple[Totals, int]:
    """The task's saved samples, added up (`Totals`), and how many of them are finished; with the examples'
    `lengths` (estimate_tokens.input_lengths), each finished one's and those of the examples still to run. With
    `drawn` (`sampled`), only the finished examples at those positions are what the rest is estimated from."""
    finished = finished_keys(run.run_dir, planned.name)
    totals = Totals()
    path = run.run_dir.sample_path(planned.name)
    if path.exists():
        for record in read_samples(path):  # with texts: a judge's calls are read only so
            if not record.bad_record:
                key = checkpoint_key(record.id, record.index)
                length = None if lengths is None else lengths.get(key)
                observed = record.error is None and (drawn is None or record.index in drawn)
                totals.add(key, example_figures(record, prices), observed, length=length)
    if lengths is not None:
        totals.rest = float(sum(length for key, length in lengths.items() if key not in finished))
    return totals, len(finished)


def run_pilot(run: PlannedRun, positions: dict[str, frozenset[int]]) -> bool:
    """The pilot's records run in the run's folder; False where the folder holds a finished run (nothing runs)
    that --overwrite does not replace."""
    recorded = run.run_dir.record
    if (
        recorded is not None
        and recorded.finished
        and not (run.config.output.overwrite and not run.config.output.resume)
    ):
        return False
    with held_services(run.config, run.registry, run.run_dir, lock_now=run.config.output.resume) as services:
        retrieved = run.open_retrieval(services)
        attempt = Attempt(run, RESUMED if run.config.output.resume else FRESH, retrieved, pilot=Pilot(positions))
        try:
            attempt.run_in(services)
        except PilotEnded:
            pass
    return True


def sampled(planned: PlannedTask, drawn: dict[str, frozenset[int]]) -> frozenset[int] | None:
    """The positions a pilot drew of a sequenced task, whose pilot also runs the turns before each drawn one (their
    answers are in its question, ragbench._run.sequences.drawn): those are paid and done, but not drawn, and earlier
    turns, with shorter histories, are not like the rest. None for any other task: each example saved is one the
    rest is estimated from."""
    return drawn[planned.name] if isinstance(planned.task, Sequenced) else None


def grown_pilot(
    run: PlannedRun,
    size: PilotSize,
    records: dict[str, int],
    prices: ModelPrices,
    precision: float,
    drawn: dict[str, frozenset[int]],
) -> dict[str, frozenset[int]] | None:
    """Stein's second stage: each task whose pilot (`drawn`)'s spread asks for more examples than ran for its
    dollars within `precision` of their point (ragbench._cost.estimate_figures.pilot_for) runs the first that many
    of the seed's order of its records (the pilot that ran is the first of them), in the run's folder; the
    positions drawn now, None where none asks."""
    from ..evaluator import Evaluator

    grown_drawn, more = {}, False
    for planned in run.planned:
        kept = sampled(planned, drawn)
        totals, done = read_totals(run, planned, prices, drawn=kept)
        measured = done if kept is None else len(totals.observed)
        wanted = totals.pilot_for(records[planned.name], precision) or 0
        more |= wanted > measured
        grown = PilotSize(count=wanted) if wanted > measured else size
        grown_drawn[planned.name] = grown.positions(records[planned.name], f"{run.config.what.seed}:{planned.name}")
    config = run.config.changed(resume=True, overwrite=False)
    return grown_drawn if more and run_pilot(Evaluator(config, run.registry).plan, grown_drawn) else None


def estimate(
    config: RunConfig, registry: Registry, size: PilotSize, pilot: bool = True, precision: float | None = None
) -> RunEstimate:
    """The run's estimate: the pre-flight (a refused run is refused here, nothing paid), the pilot (unless
    `pilot` is False: the samples saved already are all it reads), grown where `precision` asks for more
    (`grown_pilot`), and the totals."""
    from ..evaluator import Evaluator

    # a run its folder holds is continued (--resume), unless --overwrite is given: then the pilot replaces it, as
    # the run would; the folder is the one the pre-flight names (a task's own corpus changes it)
    run = Evaluator(config.changed(progress=False), registry, resume_held=True).plan
    config = run.config
    prices = run_prices(config.models, config.judging, model_urls(config.models, config.judging, registry))
    records = {p.name: count_records(p, config.what.limit) for p in run.planned}
    replaced = config.output.overwrite and not config.output.resume  # the run there is replaced: none of it counts
    before = {p.name: (Totals(), 0) if replaced else read_totals(run, p, prices) for p in run.planned}
    drawn = {name: size.positions(count, f"{config.what.seed}:{name}") for name, count in records.items()}
    ran = pilot and run_pilot(run, drawn)
    if ran and precision is not None:
        drawn = grown_pilot(run, size, records, prices, precision, drawn) or drawn
    counter = model_counter(config.models.model, config.models.model_args)
    tasks = []
    for planned in run.planned:
        lengths = None if counter is None else input_lengths(limited_records(planned, config.what.limit), counter)
        kept = sampled(planned, drawn) if ran else None
        now = read_totals(run, planned, prices, lengths, kept)
        measured = None if kept is None else len(now[0].observed)
        tasks.append(task_estimate(planned.name, records[planned.name], before[planned.name], now, measured))
    estimate = RunEstimate(
        str(run.run_dir.path),
        tasks,
        summed(task.totals for task in tasks),
        None,
        [
            *([] if any(task.done for task in tasks) else [NOTHING_RAN]),
            *unknowns(run, prices, varying=[key for task in tasks for key in varying_steps(task.totals)]),
            *(task.beyond for task in tasks if task.beyond),
        ],
        sum(t.done - t.done_before for t in tasks) if ran else 0,
        prompt_lengths(config.models.model, counter),
    )
    recorded = run.run_dir.record
    attempt = recorded.attempts[-1] if recorded is not None and recorded.attempts else None
    return replace(estimate, wall=wall_left(estimate, attempt, examples_in_flight(config.limits.max_inflight)))


def unknowns(run: PlannedRun, prices: ModelPrices, varying: list[str]) -> list[str]:
    """What the estimate cannot know, each a line: a system whose steps per example varied and that declares no
    budget of searches, a model without a price (the run's --model only where its system calls one: an application's
    system loads none, and its own models are priced by their calls)."""
    lines = []
    for planned in run.planned[:1]:
        budget = system_of(planned).declares.budget_options.get("searches")
        if budget is None and varying:
            steps = run.config.limits.max_steps_per_example or MAX_STEPS
            lines.append(
                f"system {run.config.what.system} makes more calls for some examples than for others and declares no "
                f"search budget: an example's calls are bounded only by --max-steps-per-example ({steps}); "
                "the interval assumes the pilot's spread, and a long tail of examples the pilot did not meet is not "
                "covered"
            )
    calls_model = any(system_of(planned).declares.uses_llm for planned in run.planned)
    for role, priced in {**prices.models}.items():
        if role is None and not calls_model:
            continue
        if priced.price is None and not priced.model.startswith("?"):
            lines.append(f"no dollars for {priced.model}: {priced.note}")
    return list(dict.fromkeys(lines))

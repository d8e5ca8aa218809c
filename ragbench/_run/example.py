"""One example from record to sample: the system runs it in its own context, every metric scores the
prediction, and failures (a bad record, a raising system or metric, a folded infrastructure failure)
are written into the sample record instead of being raised; a system that raised leaves its traceback
there too (`traceback`), and so does a metric that raised (`score_tracebacks`: {metric: traceback},
beside its one line in `score_errors`), for the developer of the plugin."""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Any, NamedTuple

from .._context import Context
from .._errors import RecordError
from .._llm import LLM
from .._metric import InvalidScore, score_keys, typed_scores
from .._nli import NLI
from .._plugin_calls import PluginCall
from .._records import SampleRecord
from .._storage.checkpoint import record_digest
from .._task import Task
from .._types import Example, Prediction, Step
from .._values.ceiling import Ceiling, ExampleCeiling
from .._values.urls import redacted
from .planning import PlannedTask
from .plugin_values import Sample, prediction_problem, writable_sample
from .services import ExampleServices


def record_failed(record: SampleRecord) -> bool:
    """Whether a sample record counts as a failure of the run: its example failed (or its record could
    not be read), or one of its metrics did."""
    return record.error is not None or bool(record.score_errors)


class StoppedAtFailure(Exception):
    """--fail-fast: the run stopped at the first record that failed, or whose metric failed (its sample
    is saved: `--resume` tries it again). Carries the task, the sample record, the run folder and what
    to show of the failure (`traceback`: the system's or the first failed metric's, else its error)."""

    def __init__(self, task: str, record: SampleRecord, run_dir: Path) -> None:
        self.task, self.record, self.run_dir = task, record, run_dir
        label = record.id if record.id is not None else f"record #{record.index}"
        if record.error is not None:
            what, error, trace = "failed", record.error, record.traceback
        else:
            metric, error = next(iter(record.score_errors.items()))
            what, trace = f"metric {metric} failed", record.score_tracebacks.get(metric)
        self.traceback = trace or f"{error}\n"
        super().__init__(f"{task} {label} {what}: {error}")


def made_from(item: Example | RecordError) -> str:
    """What a record's sample was made from, for --resume to tell whether the record changed since: an
    example's digest (`example_sha256`), or a bad record's error."""
    return record_digest(item) if isinstance(item, Example) else f"bad record: {item}"


async def process_example(
    planned: PlannedTask, item: Example | RecordError, services: ExampleServices, position: int
) -> Sample:
    """One record run by the system and scored: its sample record at `position` (in the task's stream) and
    its line (a bad record or a failed example is recorded in it, never raised)."""
    if isinstance(item, RecordError):
        return writable_sample(SampleRecord.sealed(id=None, index=position, error=made_from(item), bad_record=True))
    llm, retrieval, seed = services.llm, services.retrieval, services.seed
    assert llm is not None and retrieval is not None, "a run lends the examples it runs a model and retrieval"
    example = item.read_only()  # the system and every metric read this one example: none can change it
    started = time.perf_counter()
    system = planned.system
    assert system is not None  # a run with a system (only rescoring has none, and runs no example)
    name = system.name or type(system).__name__
    ceiling = ExampleCeiling(services.ceiling, f"system {name}")
    ctx = Context(
        llm=llm,
        task=planned.task,
        seed=seed,
        tools=services.tools.get(planned.name, {}),
        resources=planned.resources,
        ceiling=ceiling,
    )
    ctx.llm = llm.traced(ctx.trace, seed_base=f"{seed}:{planned.name}:{example.id}", ceiling=ceiling)
    ctx.models = {
        role: model.traced(ctx.trace, seed_base=f"{seed}:{planned.name}:{example.id}:{role}", ceiling=ceiling)
        for role, model in services.models.items()
    }
    ctx.retriever = retrieval.bind(ctx, example)
    with PluginCall() as call:
        returned = await system.run(example, ctx)
    # past its ceiling the example fails, whatever the system made of the refused step
    problem = ceiling.error or call.error or prediction_problem(name, returned)
    prediction = returned if problem is None else Prediction(example_id=example.id, error=problem)
    prediction = prediction.read_only(trace=ctx.trace)  # what the record keeps and every metric reads
    record = {**sample_fields(example, prediction, planned.task), "index": position, "traceback": call.traceback}
    record = await scored_fields(record, planned, example, prediction, services)
    record["seconds"] = round(time.perf_counter() - started, 4)
    return writable_sample(SampleRecord.sealed(**record))


async def scored_fields(
    record: dict[str, Any], planned: PlannedTask, example: Example, prediction: Prediction, services: ExampleServices
) -> dict[str, Any]:
    """`record` (a sample record's fields, without scores) with the prediction scored by every metric of the
    task, and the failed calls folded into its result listed (or, with --strict-infra, failing it)."""
    if prediction.error is None:
        scoring = await score_prediction(
            planned, example, prediction, services.judges, services.seed, services.nli, services.ceiling
        )
        record.update(
            scores=scoring.scores,
            counted=scoring.counted,
            score_errors=scoring.errors,
            score_tracebacks=scoring.tracebacks,
            judge_trace=scoring.judge_trace,
        )
    folded = [f"{step.name}: {step.error}" for step in [*record["trace"], *record.get("judge_trace", [])] if step.error]
    if folded and record.get("error") is None:  # calls that failed yet ended in a result (as upstream)
        record["infrastructure_failures"] = folded
        if services.strict_infra:
            record["error"] = f"infrastructure failure folded into the result (--strict-infra): {folded[0]}"
    return failures_redacted(record)


def failures_redacted(record: dict[str, Any]) -> dict[str, Any]:
    """`record` (a sample record's fields) with the credentials of any URL in what it says of its failures
    redacted (its error, tracebacks, the errors of its steps): a plugin's exception may quote the URL it called,
    key and all."""
    for name in ("error", "traceback", "score_errors", "score_tracebacks", "infrastructure_failures"):
        if record.get(name) is not None:
            record[name] = redacted(record[name])
    for name in ("trace", "judge_trace"):
        if name in record:
            record[name] = [
                step
                if step.error is None or redacted(step.error) == step.error
                else step.read_only(error=redacted(step.error))
                for step in record[name]
            ]
    return record


def sample_fields(example: Example, prediction: Prediction, task: Task | None = None) -> dict[str, Any]:
    """The fields of a run example's sample record, without scores; with `task`, the gold as the task reads
    it (`gold_references`)."""
    return {
        "id": example.id,
        "index": example.index,
        "question": example.question,
        "gold": example.gold,
        "meta": example.meta,
        "turns": example.turns,
        "example_sha256": record_digest(example),
        **(gold_references(task, example) if task else {}),
        "answer": prediction.answer,
        "citations": prediction.citations,
        "docs": prediction.docs,
        "extras": prediction.extras,
        "raw_output": prediction.raw_output if prediction.raw_output != prediction.answer else None,
        "output": prediction.raw_output if prediction.raw_output is not None else prediction.answer,
        "trace": prediction.trace,  # the one copy of its prompts
        "error": prediction.error,
    }


def sample_record(example: Example, prediction: Prediction, task: Task | None = None) -> SampleRecord:
    """The sample record of a run example, without scores (`sample_fields`)."""
    return SampleRecord.sealed(**sample_fields(example, prediction, task))


def gold_references(task: Task, example: Example) -> dict[str, Any]:
    """`gold_references`: the example's gold as the task reads it (`Task.gold_references`), written into
    the sample so that readers of a run folder (the viewer) show it without loading the task; a reading
    that raises is recorded as `gold_references_error` (the metrics that read it fail on their own)."""
    with PluginCall() as call:
        return {"gold_references": [str(text) for text in task.gold_references(example.gold)]}
    return {"gold_references_error": call.error}


class Scoring(NamedTuple):
    """What the metrics made of one prediction."""

    scores: dict[str, Any]  # typed, of the metrics that scored
    errors: dict[str, str]  # metric -> why it failed, in one line
    tracebacks: dict[str, str]  # metric -> the traceback of what it raised (`PluginCall.traceback`)
    judge_trace: list[Step]  # the metrics' judge calls
    counted: dict[str, dict[str, int]]  # metric -> its counted events


async def score_prediction(
    planned: PlannedTask,
    example: Example,
    prediction: Prediction,
    judges: list[LLM],
    seed: int,
    nli: NLI | None,
    ceiling: Ceiling,
) -> Scoring:
    """Every metric of the task on one prediction; a failing metric is recorded, not raised: one that
    raises (its traceback kept), or returns something that is not a score (`typed_scores`: the message
    names the metric, the key and the value's type), fails on this example and adds none of its keys.
    Corpus-only metrics (no per-example keys) are not asked. NLI calls are not traced per sample (they
    are logged once per run in nli_calls.jsonl). Every metric reads the same read-only example and prediction:
    none can change what the next one scores. Each metric's steps on the example count against a `ceiling` of
    its own (the run's `ceiling`): past it, the metric fails on this example."""
    example, prediction = example.read_only(), prediction.read_only()
    scores: dict[str, Any] = {}
    counted: dict[str, dict[str, int]] = {}
    errors: dict[str, str] = {}
    tracebacks: dict[str, str] = {}
    judge_trace: list[Step] = []
    for metric in planned.metrics:
        if not score_keys(metric):
            continue
        # each metric its own context, which no other metric's code reaches: its judge handles, seeded and
        # numbered by the metric (its sampled verdicts and their cache keys do not depend on which other
        # metrics ran before it), its counts, the trace of its judge calls and its ceiling
        metric_ceiling = ExampleCeiling(ceiling, f"metric {metric.name}")
        ctx = Context(
            llm=None,  # type: ignore[arg-type]
            task=planned.task,
            seed=seed,
            nli=nli,
            resources=planned.resources,
            ceiling=metric_ceiling,
        )
        ctx.judges = [
            judge.traced(
                ctx.trace,
                seed_base=f"{seed}:{planned.name}:{example.id}:{metric.name}:judge{i}",
                ceiling=metric_ceiling,
            )
            for i, judge in enumerate(judges)
        ]
        try:
            with PluginCall() as call:
                value = metric.score(example, prediction, ctx)
                if inspect.isawaitable(value):
                    value = await value
        finally:
            judge_trace.extend(ctx.trace)
        failure = metric_ceiling.error or call.error  # past its ceiling, whatever the metric made of the refusal
        if failure is None:
            try:
                scores.update(typed_scores(metric, value))
            except InvalidScore as exc:  # not a score: the metric raised nothing, no traceback
                errors[metric.name] = f"{type(exc).__name__}: {exc}"
                continue
        else:
            errors[metric.name] = failure
            if call.traceback is not None:
                tracebacks[metric.name] = call.traceback
            continue
        if ctx.counts:
            counted[metric.name] = dict(ctx.counts)
    return Scoring(scores, errors, tracebacks, judge_trace, counted)

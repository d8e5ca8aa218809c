"""One example from record to sample: the system runs it in its own context, every metric scores the
prediction, and failures (a bad record, a raising system or metric, a folded infrastructure failure)
are written into the sample record instead of being raised; a system that raised leaves its traceback
there too (`traceback`), and so does a metric that raised (`score_tracebacks`: {metric: traceback},
beside its one line in `score_errors`), for the developer of the plugin."""

from __future__ import annotations

import asyncio
import inspect
import time
from pathlib import Path
from typing import Any, NamedTuple, TypedDict

from .._context import Context, ScoringContext
from .._errors import RecordError
from .._metric import InvalidScore, Metric, Scores, reported_keys, score_keys, typed_scores
from .._plugin_calls import PluginCall
from .._records import RatingEntry, SampleRecord
from .._storage.checkpoint import record_digest
from .._storage.thumbnails import keep_thumbnails
from .._task import Task
from .._types import Example, Prediction, Step
from .._values.ceiling import ExampleCeiling
from .._values.images import Image
from .._values.urls import redacted
from .judges.raters import Rater, headline_is_a_rater, raters, rating_entry
from .plan.planned_task import PlannedTask
from .plugin_values import Sample, prediction_problem, writable_sample
from .services import ExampleServices

# the first documents shown whose images the viewer shows (ViDoRe's pages: those its nDCG@10 scores)
THUMBNAILED_DOCS = 10


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
    planned: PlannedTask,
    item: Example | RecordError,
    services: ExampleServices,
    position: int,
    read_as: Example | None = None,
) -> Sample:
    """One record run by the system and scored: its sample record at `position` (in the task's stream) and
    its line (a bad record or a failed example is recorded in it, never raised). `read_as`: the record as the
    task's stream holds it, where `item` is what the system is asked instead (a later example of a sequence, with
    the answers before it: ragbench._run.sequences); the sample keeps its digest, which --resume reads again."""
    if isinstance(item, RecordError):
        return writable_sample(SampleRecord.sealed(id=None, index=position, error=made_from(item), bad_record=True))
    return await scored_sample(await answered(planned, item, services, position, read_as), services)


class Answered(NamedTuple):
    """An example the system has answered (`answered`), to be settled (`settled`), scored and made a sample
    (`scored_sample`)."""

    planned: PlannedTask
    example: Example
    ctx: Context  # the system's context: its trace, with the steps it left to make (`Context.steps_later`)
    returned: Prediction | None  # what the system returned (None: it raised, `call` holds why)
    call: PluginCall  # the system's call
    problem: str | None  # the example's failure known when it answered (its ceiling reached, the system raised)
    position: int
    read_as: Example | None
    started: float  # time.perf_counter() when the system was asked


def answers_elsewhere(planned: PlannedTask) -> bool:
    """Whether the task's system calls no model of the run (an application, whose answer comes from elsewhere): its
    examples may be scored while its next ones are asked (ragbench._run.modes.attempt) with no model's calls
    reordered, the metrics' calls of each example still before the next one's."""
    system = planned.system
    return system is not None and not system.declares.uses_llm


async def answered(
    planned: PlannedTask, item: Example, services: ExampleServices, position: int, read_as: Example | None = None
) -> Answered:
    """`item` run by the system in its own context (`process_example`'s first half): what it returned, or why it
    failed (never raised), for `settled` to make its prediction and sample record of."""
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
    ctx.defer_steps()  # `settled` reads the trace whole
    returned: Prediction | None = None
    with PluginCall() as call:
        returned = await system.run(example, ctx)
    # past its ceiling the example fails, whatever the system made of the refused step
    return Answered(planned, example, ctx, returned, call, ceiling.error or call.error, position, read_as, started)


def settled(answer: Answered) -> tuple[Prediction, SampleRecord]:
    """An answered example's prediction as every metric reads it (read-only, its trace whole: the steps its system
    left to make, made now) and its sample record without scores. An application system's slot asks its next
    example before this is done (ragbench._run.modes.attempt): none of it holds the application's next call back."""
    planned, example, ctx, returned, call, problem, position, read_as, _ = answer
    system = planned.system
    assert system is not None  # as `answered`'s
    # the steps left to make are the system's code too: one that raises fails the example, unless it already failed
    with call if call.raised is None else PluginCall():
        ctx.settle_trace()
    problem = problem or call.error or prediction_problem(system.name or type(system).__name__, returned)
    prediction = returned if problem is None and isinstance(returned, Prediction) else None
    if prediction is None:
        prediction = Prediction(example_id=example.id, error=problem)
    prediction = prediction.read_only(trace=ctx.trace)  # what the record keeps and every metric reads
    record = sample_record(example, prediction, planned.task, index=position, traceback=call.traceback, read_as=read_as)
    return prediction, record


async def scored_sample(answer: Answered, services: ExampleServices) -> Sample:
    """An answered example's thumbnails kept, its prediction scored by every metric of the task, and its sample
    (`process_example`'s second half); its `seconds` from the system's asking to the scores."""
    planned, example, started = answer.planned, answer.example, answer.started
    prediction, record = settled(answer)
    shown = viewed_images(example, prediction)
    if services.run_folder is not None and shown:
        # what the viewer shows of them; decoding and resizing off the event loop, where other examples' calls wait
        await asyncio.to_thread(keep_thumbnails, services.run_folder, shown)
    record = await scored(record, planned, example, prediction, services)
    return writable_sample(record.read_only(seconds=round(time.perf_counter() - started, 4)))


def viewed_images(example: Example, prediction: Prediction) -> list[Image]:
    """The images the viewer shows of an example, whose thumbnails the run keeps: the example's own, those of its
    first `THUMBNAILED_DOCS` documents (a page retrieved as the passage: ViDoRe's) and of the documents its qrels gold
    grades above 0 among them."""
    qrels = example.gold.get("qrels")
    relevant = (
        {str(key) for key, grade in qrels.items() if isinstance(grade, (int, float)) and grade > 0}
        if isinstance(qrels, dict)
        else set()
    )
    pages = [
        doc.image
        for place, doc in enumerate(prediction.docs)
        if doc.image is not None and (place < THUMBNAILED_DOCS or str(doc.id) in relevant)
    ]
    return [*example.images, *pages]


async def scored(
    record: SampleRecord, planned: PlannedTask, example: Example, prediction: Prediction, services: ExampleServices
) -> SampleRecord:
    """`record` (a sample record without scores) with the prediction scored by every metric of the task, and
    the failed calls folded into its result listed (or, with --strict-infra, failing it)."""
    changes: dict[str, Any] = {}
    if prediction.error is None:
        scoring = await score_prediction(planned, example, prediction, services)
        changes.update(scoring._asdict())  # the record's fields of those names
    steps = [*record.trace, *changes.get("judge_trace", record.judge_trace)]
    folded = [f"{step.name}: {step.error}" for step in steps if step.error]
    if folded and record.error is None:  # calls that failed yet ended in a result (as upstream)
        changes["infrastructure_failures"] = folded
        if services.strict_infra:
            changes["error"] = f"infrastructure failure folded into the result (--strict-infra): {folded[0]}"
    return failures_redacted(record.read_only(**changes))


def failures_redacted(record: SampleRecord) -> SampleRecord:
    """`record` with the credentials of any URL in what it says of its failures redacted (its error,
    tracebacks, the errors of its steps): a plugin's exception may quote the URL it called, key and all."""
    changes: dict[str, Any] = {}
    for name in ("error", "traceback", "score_errors", "score_tracebacks", "infrastructure_failures"):
        value = getattr(record, name)
        if value is not None and redacted(value) != value:
            changes[name] = redacted(value)
    for name in ("trace", "judge_trace"):
        steps = getattr(record, name)
        kept = [
            step
            if step.error is None or redacted(step.error) == step.error
            else step.read_only(error=redacted(step.error))
            for step in steps
        ]
        if any(new is not old for new, old in zip(kept, steps)):
            changes[name] = kept
    return record.read_only(**changes) if changes else record


def sample_record(
    example: Example,
    prediction: Prediction,
    task: Task | None = None,
    *,
    index: int | None = None,
    traceback: str | None = None,
    read_as: Example | None = None,
) -> SampleRecord:
    """The sample record of a run example, without scores; with `task`, the gold as the task reads it
    (`gold_references`); `index`: its position in the task's stream (else the example's own); `traceback`:
    what the system raised; `read_as`: the record as the task's stream holds it (its digest is the sample's), where
    the system was asked `example` instead."""
    return SampleRecord.sealed(
        id=example.id,
        index=example.index if index is None else index,
        question=example.question,
        gold=example.gold,
        meta=example.meta,
        turns=None if example.turns is None else list(example.turns),
        images=[image.record(source=True) for image in example.images],
        example_sha256=record_digest(example if read_as is None else read_as),
        **(gold_references(task, example) if task else {}),
        answer=prediction.answer,
        citations=prediction.citations,
        docs=prediction.docs,
        extras=prediction.extras,
        raw_output=prediction.raw_output if prediction.raw_output != prediction.answer else None,
        output=prediction.raw_output if prediction.raw_output is not None else prediction.answer,
        trace=prediction.trace,  # the one copy of its prompts
        error=prediction.error,
        traceback=traceback,
    )


class GoldReading(TypedDict, total=False):
    """A sample's reading of its gold: the texts, or why the task could not read them."""

    gold_references: list[str]
    gold_references_error: str | None


def gold_references(task: Task, example: Example) -> GoldReading:
    """`gold_references`: the example's gold as the task reads it (`Task.gold_references`), written into
    the sample so that readers of a run folder (the viewer) show it without loading the task; a reading
    that raises is recorded as `gold_references_error` (the metrics that read it fail on their own)."""
    with PluginCall() as call:
        return {"gold_references": [str(text) for text in task.gold_references(example.gold)]}
    return {"gold_references_error": call.error}


class PredictionScores(NamedTuple):
    """What the metrics made of one prediction: the sample record's fields of that name."""

    scores: Scores  # typed, of the metrics that scored
    score_errors: dict[str, str]  # metric -> why it failed, in one line
    score_tracebacks: dict[str, str]  # metric -> the traceback of what it raised (`PluginCall.traceback`)
    judge_trace: list[Step]  # the metrics' judge calls
    counted: dict[str, dict[str, int]]  # metric -> its counted events
    judge_ratings: dict[str, RatingEntry]  # metric -> its raters' values (ragbench._run.judges.raters)


class MetricScoring(NamedTuple):
    """One scoring of one metric: its typed scores, or why it failed (and the traceback of what it raised)."""

    scores: Scores | None
    error: str | None
    traceback: str | None


class ScoringJob(NamedTuple):
    """What every scoring of the task's metrics on one prediction shares: the run's judges, NLI model, seed,
    ceiling and judge repeats are those it lends the example (`services`)."""

    planned: PlannedTask
    example: Example
    prediction: Prediction
    services: ExampleServices

    def context(self, metric: Metric, ceiling: ExampleCeiling, rater: Rater | None = None) -> ScoringContext:
        """The metric's own context, which no other metric's code reaches: its judge handles (those of `rater`,
        else every judge), seeded and numbered by the metric, the judge and the repeat (its sampled verdicts and
        their cache keys do not depend on which other metrics ran before it), its counts, the trace of its judge
        calls and its ceiling."""
        ctx = ScoringContext(
            task=self.planned.task,
            seed=self.services.seed,
            nli=self.services.nli,
            resources=self.planned.resources,
            ceiling=ceiling,
        )
        repeat = rater.repeat if rater is not None else 0
        base = f"{self.services.seed}:{self.planned.name}:{self.example.id}:{metric.name}"
        judges = self.services.judges
        ctx.judges = [
            judges[i].traced(
                ctx.trace,
                seed_base=f"{base}:judge{i}" + (f":repeat{repeat}" if repeat else ""),
                ceiling=ceiling,
                seed_greedy=repeat > 0,
            )
            for i in (rater.judges if rater is not None else range(len(judges)))
        ]
        return ctx

    async def score(
        self, metric: Metric, ctx: ScoringContext, ceiling: ExampleCeiling, trace: list[Step]
    ) -> MetricScoring:
        """`metric` on the prediction in `ctx`; a failure is returned, not raised (see `score_prediction`).
        Its judge calls are added to `trace`, however it ends."""
        try:
            with PluginCall() as call:
                value = metric.score(self.example, self.prediction, ctx)
                if inspect.isawaitable(value):
                    value = await value
        finally:
            trace.extend(ctx.trace)
        failure = ceiling.error or call.error  # past its ceiling, whatever the metric made of the refusal
        if failure is not None:
            return MetricScoring(None, failure, call.traceback)
        try:
            return MetricScoring(typed_scores(metric, value), None, None)
        except InvalidScore as exc:  # not a score: the metric raised nothing, no traceback
            return MetricScoring(None, f"{type(exc).__name__}: {exc}", None)

    async def ratings(
        self, metric: Metric, found: list[Rater], headline: Scores, ceiling: ExampleCeiling, trace: list[Step]
    ) -> RatingEntry:
        """The sample's `judge_ratings` entry of `metric`: every rater's scoring (the headline's own where it is
        the first rater), at once; their judge calls added to `trace` in the raters' order. Their steps count
        against the metric's `ceiling` on the example, the headline's with them: a rater that ends after it was
        reached fails."""
        own = headline_is_a_rater(found)
        traces: list[list[Step]] = [[] for _ in found]

        async def rated(i: int, rater: Rater) -> MetricScoring:
            if own and i == 0:
                return MetricScoring(headline, None, None)
            return await self.score(metric, self.context(metric, ceiling, rater), ceiling, traces[i])

        scorings = await asyncio.gather(*(rated(i, rater) for i, rater in enumerate(found)))
        for steps in traces:
            trace.extend(steps)
        errors = {r.label: s.error for r, s in zip(found, scorings, strict=True) if s.error is not None}
        return rating_entry(found, [s.scores for s in scorings], list(reported_keys(metric)), errors)


async def score_prediction(
    planned: PlannedTask, example: Example, prediction: Prediction, services: ExampleServices
) -> PredictionScores:
    """Every metric of the task on one prediction; a failing metric is recorded, not raised: one that
    raises (its traceback kept), or returns something that is not a score (`typed_scores`: the message
    names the metric, the key and the value's type), fails on this example and adds none of its keys.
    Corpus-only metrics (no per-example keys) are not asked. NLI calls are not traced per sample (they
    are logged once per run in nli_calls.jsonl). Every metric reads the same read-only example and prediction:
    none can change what the next one scores. Each metric's steps on the example, those of all its raters with
    them, count against one ceiling of its own (of the run's, `services.ceiling`): past it, the metric (or the
    rater) fails on this example. A judged metric that
    scored is scored again by each of its raters (`services.judge_repeats`, several judges:
    ragbench._run.judges.raters); a rater that fails is named in its ratings, and the metric's scores are the
    headline's still."""
    job = ScoringJob(planned, example.read_only(), prediction.read_only(), services)
    scores: Scores = {}
    counted: dict[str, dict[str, int]] = {}
    errors: dict[str, str] = {}
    tracebacks: dict[str, str] = {}
    judge_trace: list[Step] = []
    ratings: dict[str, RatingEntry] = {}
    for metric in planned.metrics:
        if not score_keys(metric):
            continue
        metric_ceiling = ExampleCeiling(services.ceiling, f"metric {metric.name}")
        ctx = job.context(metric, metric_ceiling)
        scored = await job.score(metric, ctx, metric_ceiling, judge_trace)
        if scored.scores is None:
            errors[metric.name] = str(scored.error)
            if scored.traceback is not None:
                tracebacks[metric.name] = scored.traceback
            continue
        scores.update(scored.scores)
        if ctx.counts:
            counted[metric.name] = dict(ctx.counts)
        found = raters(metric, len(services.judges), services.judge_repeats)
        if found:
            ratings[metric.name] = await job.ratings(metric, found, scored.scores, metric_ceiling, judge_trace)
    return PredictionScores(scores, errors, tracebacks, judge_trace, counted, ratings)

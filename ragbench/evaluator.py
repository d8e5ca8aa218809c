"""Runs a system on tasks: examples stream in, run as coroutines (at most `max_inflight` at once,
across all tasks), each is scored as soon as it finishes and appended to the checkpoint.
"""
from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

from .cache import ResponseCache
from .context import Context
from .engines import load_engine
from .errors import RecordError
from .exchange_log import ExchangeLog, LoggingRecorder, judge_log_name
from .llm import LLM
from .nli import NLI
from .progress import Progress
from .provenance import provenance
from .planning import PlannedTask, needs, plan
from .registry import Registry, get_registry
from .run_config import RunConfig
from .results import aggregate_task
from .retrieval import load_retriever
from .retrieval.handle import Retrieval
from .recording import CALLS_DIR, CallRecorder
from .rundir import RunDir
from .scheduler import Scheduler
from .summary import report_markdown
from .tools import load_replay_tools, recording_tools
from .types import Example, Prediction

__all__ = ["Evaluator", "RunConfig", "RunOutcome", "sample_record"]


@dataclass
class RunOutcome:
    results: dict[str, Any]
    run_dir: Path
    already_finished: bool = False  # --resume of a finished run with nothing left to do

    @property
    def complete(self) -> bool:
        return self.results["complete"]


class Evaluator:
    def __init__(self, config: RunConfig, registry: Registry | None = None) -> None:
        self.config = config
        self.registry = registry or get_registry()
        self.planned = plan(config, self.registry)
        self.run_dir = RunDir(config.run_dir())
        # fails fast on a bad index
        self.retriever = load_retriever(config.retriever, config.retriever_args, registry=self.registry)
        self.retrieval_stats: dict[str, int] = {}
        self.nli: NLI | None = None
        self.expected: dict[str, int] = {}  # records each task's stream held (the run must end with as many)
        self.attempts: list[dict[str, Any]] = []  # cost of the earlier attempts (--resume)

    def run(self) -> RunOutcome:
        config = self.config
        if config.resume and self._nothing_left():
            self.run_dir.close()
            return RunOutcome(json.loads((self.run_dir.path / "results.json").read_text(encoding="utf-8")),
                              self.run_dir.path, already_finished=True)
        self.attempts = self.run_dir.start(self.full_config(), config.identity(), config.config_hash(), config.resume,
                                           config.overwrite)
        needs_llm = any(type(p.system).uses_llm for p in self.planned)
        engine = load_engine(config.model, registry=self.registry, **config.model_args) if needs_llm else None
        role_engines = {role: load_engine(model, registry=self.registry, **config.role_model_args.get(role, {}))
                        for role, model in config.role_models.items()}
        judges = [load_engine(model, registry=self.registry, **config.judge_args.get(str(i), {}))
                  for i, model in enumerate(config.judges)]
        nli_engine = self._nli_engine(engine)
        cache = ResponseCache(config.cache or self.run_dir.path / "cache.sqlite")
        started = time.perf_counter()
        try:
            for planned in self.planned if engine is not None else ():
                planned.system.check_model(engine)
            processed, scheduler = asyncio.run(self._execute(engine, judges, cache, nli_engine, role_engines))
        finally:
            self.run_dir.close()
            cache.close()
            self.retriever.close()
            if engine is not None:
                engine.close()
            for other in (*judges, *role_engines.values()):
                other.close()
            if nli_engine is not None and nli_engine is not engine:
                nli_engine.close()
        wall = time.perf_counter() - started
        results = self.collect(scheduler, processed, wall)
        self.run_dir.record_attempt(results["cost"]["this_attempt"])
        self.run_dir.finish(results, report_markdown(results, self.run_dir.path))
        return RunOutcome(results, self.run_dir.path)

    def _nli_engine(self, engine):
        """The NLI engine when a metric needs one; the system's own engine when --nli names the
        same model with no engine options of its own."""
        config = self.config
        if config.nli is None or not needs(self.planned, "nli"):
            return None
        if engine is not None and config.nli == config.model and not config.nli_args:
            return engine
        return load_engine(config.nli, registry=self.registry, **config.nli_args)

    def full_config(self) -> dict[str, Any]:
        out = asdict(self.config)
        out["tasks"] = [p.name for p in self.planned]
        uses_llm = any(type(p.system).uses_llm for p in self.planned)
        out["model"] = (self.config.model or "hf:embedded") if uses_llm else None
        out["task_configs"] = {p.name: p.task.config() for p in self.planned}
        out["system_config"] = {p.name: p.system.config() for p in self.planned}
        out["metric_configs"] = {p.name: [m.config() for m in p.metrics] for p in self.planned}
        out["retriever_metadata"] = self.retriever.metadata()
        return json.loads(json.dumps(out, default=str))

    # --- execution ------------------------------------------------------------------------------
    def _nothing_left(self) -> bool:
        """A finished run whose records all need no new attempt (no failed example)."""
        meta = self.run_dir.meta
        if not meta or not meta.get("finished") or meta.get("config_hash") != self.config.config_hash():
            return False
        return all(r.get("error") is None or r.get("bad_record")
                   for p in self.planned for r in self.run_dir.read_samples(p.name))

    def _work(self) -> Iterator[tuple[PlannedTask, int, Example | RecordError]]:
        """Every record still to do with its position in the task's stream, task after task, streamed
        (the limit applies per task). Checkpoint keys are example ids: a repeated id is a bad record."""
        for planned in self.planned:
            done = self.run_dir.finished_keys(planned.name) if self.config.resume else set()
            seen: set[str] = set()
            self.expected[planned.name] = 0
            for position, item in enumerate(planned.task.examples()):
                if self.config.limit is not None and position >= self.config.limit:
                    break
                self.expected[planned.name] += 1
                if isinstance(item, Example):
                    if str(item.id) in seen:
                        item = RecordError(planned.name, position + 1, f"example id {item.id!r} repeats an earlier "
                                                                       "record's (ids must be unique in a task)", "id")
                    else:
                        seen.add(str(item.id))
                key = str(item.id) if isinstance(item, Example) else f"#record-{position}"
                if key not in done:
                    yield planned, position, item

    async def _execute(self, engine, judges, cache: ResponseCache, nli_engine=None,
                       role_engines: dict[str, Any] | None = None) -> tuple[int, Scheduler]:
        scheduler = Scheduler(cache)
        recorder = CallRecorder(self.run_dir.path / CALLS_DIR)
        llm = LLM(scheduler, engine, recorder=recorder.for_role("model"))
        role_engines = role_engines or {}
        models = {role: LLM(scheduler, role_engine, recorder=recorder.for_role(role))
                  for role, role_engine in role_engines.items()}
        judge_logs = [ExchangeLog(self.run_dir.path / judge_log_name(i)) for i in range(len(judges))]  # --judge replay:
        judge_llms = [LLM(scheduler, judge, recorder=LoggingRecorder(recorder.for_role(f"judge:{i}"), log))
                      for i, (judge, log) in enumerate(zip(judges, judge_logs))]
        retrieval = Retrieval(self.retriever, recorder=recorder)
        self.nli = None if nli_engine is None else NLI(
            LLM(scheduler, nli_engine, recorder=recorder.for_role("nli")), self.config.nli_format,
            self.run_dir.path / "nli_calls.jsonl")
        tools = await self._tools(recorder)
        work = self._work()
        progress = Progress(scheduler.stats, total=self._known_total(), enabled=self.config.progress)
        processed = 0

        async def worker() -> None:
            nonlocal processed
            for planned, position, item in work:
                record = await self._process(planned, item, llm, judge_llms, tools[planned.name], retrieval, models)
                record["index"] = position
                self.run_dir.append_sample(planned.name, record)
                processed += 1
                progress.advance(failed=record.get("error") is not None)

        try:
            await asyncio.gather(*(worker() for _ in range(max(1, self.config.max_inflight))))
        finally:
            progress.close()
            recorder.close()
            for planned in self.planned:
                await planned.task.teardown()
            await scheduler.close()
            await retrieval.close()
            self.retrieval_stats = retrieval.stats.to_dict()
            if self.nli is not None:
                self.nli.close()
            for log in judge_logs:
                log.close()
            for open_engine in (engine, *judges, *role_engines.values(),
                                *([nli_engine] if nli_engine not in (None, engine) else [])):  # HTTP clients close inside the loop that opened them
                if hasattr(open_engine, "aclose"):
                    await open_engine.aclose()
        return processed, scheduler

    async def _tools(self, recorder: CallRecorder) -> dict[str, dict[str, Any]]:
        """Each task's tools (ctx.tools), recorded call by call; under --replay, answered from the
        recorded run's calls instead (no task setup: no KG server is started)."""
        if self.config.replay_tools is not None:
            replayed = load_replay_tools(self.config.replay_tools)
            return {planned.name: replayed.get(planned.name, {}) for planned in self.planned}
        tools = {planned.name: await planned.task.setup() for planned in self.planned}
        recorder.tool_names({task: sorted(names) for task, names in tools.items()})
        return {task: recording_tools(task, named, recorder) for task, named in tools.items()}

    def _known_total(self) -> int | None:
        """Records this run will process, for the progress bar's ETA (None when a task cannot tell cheaply)."""
        total = 0
        for planned in self.planned:
            size = planned.task.size_hint()
            if size is None and self.config.limit is None:
                return None
            total += min(x for x in (size, self.config.limit) if x is not None)
        return total

    async def _process(self, planned: PlannedTask, item: Example | RecordError, llm: LLM,
                       judges: list[LLM], tools: dict[str, Any], retrieval: Retrieval,
                       models: dict[str, LLM] | None = None) -> dict[str, Any]:
        if isinstance(item, RecordError):
            return {"id": None, "error": f"bad record: {item}", "bad_record": True}
        example = item
        started = time.perf_counter()
        ctx = Context(llm=llm, task=planned.task, seed=self.config.seed, tools=tools)
        ctx.llm = llm.traced(ctx.trace, seed_base=f"{self.config.seed}:{planned.name}:{example.id}")
        ctx.models = {role: model.traced(ctx.trace, seed_base=f"{self.config.seed}:{planned.name}:{example.id}:{role}")
                      for role, model in (models or {}).items()}
        ctx.retriever = retrieval.bind(ctx, example)
        try:
            prediction = await planned.system.run(example, ctx)
        except Exception as exc:
            prediction = Prediction(example_id=example.id, error=f"{type(exc).__name__}: {exc}")
        prediction.trace = ctx.trace
        record = sample_record(example, prediction)
        if prediction.error is None:
            scores, errors, judge_trace = await score_prediction(planned, example, prediction, judges,
                                                                 self.config.seed, self.nli)
            record["scores"] = scores
            if errors:
                record["score_errors"] = errors
            if judge_trace:
                record["judge_trace"] = judge_trace
        folded = [f"{step['name']}: {step['error']}" for step in [*record["trace"], *record.get("judge_trace", [])]
                  if step.get("error")]
        if folded and record.get("error") is None:  # calls that failed yet ended in a result (as upstream)
            record["infrastructure_failures"] = folded
            if self.config.strict_infra:
                record["error"] = f"infrastructure failure folded into the result (--strict-infra): {folded[0]}"
        record["seconds"] = round(time.perf_counter() - started, 4)
        return record

    # --- results --------------------------------------------------------------------------------
    def collect(self, scheduler: Scheduler, processed: int, wall: float) -> dict[str, Any]:
        results: dict[str, dict[str, Any]] = {}
        details: dict[str, Any] = {}
        counts: dict[str, Any] = {}
        failures: dict[str, list[dict[str, Any]]] = {}
        infra: dict[str, dict[str, Any]] = {}
        system_reports: dict[str, Any] = {}
        system_stats: dict[str, Any] = {}
        for planned in self.planned:
            samples = self.run_dir.finalize_samples(planned.name)
            detail = aggregate_task(samples, planned.metrics, planned.task.slice_fields,
                                    self.config.bootstrap_iters, self.config.seed)
            details[planned.name] = detail
            results[planned.name] = {key: entry["value"] for key, entry in detail.items()}
            bad = sum(1 for s in samples if s.get("bad_record"))
            failed = sum(1 for s in samples if s.get("error") is not None) - bad
            # every record of the stream must have ended as a scored record or a recorded error
            missing = max(0, self.expected.get(planned.name, len(samples)) - len(samples))
            counts[planned.name] = {"records": len(samples), "scored": len(samples) - failed - bad,
                                    "failed": failed, "bad_records": bad, "missing": missing}
            causes = failure_causes(samples)
            if causes:
                failures[planned.name] = causes
            folded = [f for s in samples for f in s.get("infrastructure_failures") or []]
            if folded:
                infra[planned.name] = {
                    "examples": sum(1 for s in samples if s.get("infrastructure_failures")), "calls": len(folded),
                    "causes": [{"cause": c, "count": n} for c, n in Counter(f[:200] for f in folded).most_common(5)]}
            report = planned.system.report({s["id"] for s in samples if s.get("id") is not None},
                                           complete_data=self.config.limit is None)
            if report is not None:
                system_reports[planned.name] = report
            figures = planned.system.statistics(samples)
            if figures:
                system_stats[planned.name] = figures
        stats = scheduler.stats.to_dict()
        attempt = {"examples": processed, "wall_seconds": round(wall, 3),
                   "llm_calls": stats["calls"], **{k: v for k, v in stats.items() if k != "calls"}}
        cost = whole_run_cost([*self.attempts, attempt])
        cost["this_attempt"] = attempt
        if self.retrieval_stats.get("batches"):  # queries answered by pooled searches (provided docs are not)
            cost["retrieval"] = {"queries": self.retrieval_stats["calls"] + self.retrieval_stats["shared"],
                                 "searches": self.retrieval_stats["batches"], "errors": self.retrieval_stats["errors"]}
        if self.nli is not None:
            cost["nli"] = self.nli.stats.to_dict()
        complete = (all(c["failed"] == 0 and c["bad_records"] == 0 and c["missing"] == 0 for c in counts.values())
                    and not any(r.get("errors") for r in system_reports.values()))
        return {"results": results, "details": details, "counts": counts, "complete": complete,
                **({"failures": failures} if failures else {}),
                **({"infrastructure_failures": infra} if infra else {}),
                "seed_policy": "every sampled call (temperature > 0) without its own seed gets "
                               "sha256('{seed}:{task}:{example id}:{call number}'), so outputs do not depend on "
                               "batch composition",
                **({"system_reports": system_reports} if system_reports else {}),
                **({"system_stats": system_stats} if system_stats else {}),
                "cost": cost, "config": self.full_config(), "versions": provenance(),
                "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def whole_run_cost(attempts: list[dict[str, Any]]) -> dict[str, Any]:
    """The cost of every attempt of a run (first run and resumes) added up."""
    total: dict[str, Any] = {}
    for attempt in attempts:
        for key, value in attempt.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    total["wall_seconds"] = round(total.get("wall_seconds", 0.0), 3)
    wall = total["wall_seconds"]
    total["examples_per_second"] = round(total.get("examples", 0) / wall, 3) if wall > 0 else 0.0
    total["attempts"] = len(attempts)
    return total


def failure_causes(samples: list[dict[str, Any]], most: int = 5) -> list[dict[str, Any]]:
    """The most common errors of failed records (first line, numbers kept), most frequent first."""
    counter = Counter(str(s["error"]).splitlines()[0][:200] for s in samples if s.get("error") is not None)
    return [{"cause": cause, "count": count} for cause, count in counter.most_common(most)]


def sample_record(example: Example, prediction: Prediction) -> dict[str, Any]:
    record = {"index": example.index, **example.summary(), "prediction": prediction.to_dict(),
              "output": prediction.raw_output if prediction.raw_output is not None else prediction.answer,
              "prompts": prediction.prompts, "trace": [step.to_dict() for step in prediction.trace],
              "error": prediction.error}
    return record


async def score_prediction(planned: PlannedTask, example: Example, prediction: Prediction,
                           judges: list[LLM], seed: int, nli: NLI | None = None,
                           ) -> tuple[dict[str, Any], dict[str, str], list]:
    """Every metric of the task on one prediction; a failing metric is recorded, not raised.
    NLI calls are not traced per sample (they are logged once per run in nli_calls.jsonl)."""
    scores: dict[str, Any] = {}
    errors: dict[str, str] = {}
    ctx = Context(llm=None, task=planned.task, seed=seed, nli=nli)  # type: ignore[arg-type]
    ctx.judges = [judge.traced(ctx.trace, seed_base=f"{seed}:{planned.name}:{example.id}:judge{i}")
                  for i, judge in enumerate(judges)]
    for metric in planned.metrics:
        try:
            value = metric.score(example, prediction, ctx)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            errors[metric.name] = f"{type(exc).__name__}: {exc}"
            continue
        if isinstance(value, dict):
            scores.update(value)
        else:
            scores[metric.name] = value
    return scores, errors, [step.to_dict() for step in ctx.trace]

"""The services of one run, opened in stages, each returning what it opened for the stages after it: the registry
and the run folder it was made with, then (after the pre-flight and the folder's lock) the retriever and the
pipeline components with their models (`OpenRetrieval`), the run's resources (worker processes, page caches),
the engines, the response cache - put together as `Opened` - and, inside the run's event loop, the scheduler,
the call recorder and the handles every example reaches (`Calls`, `run_calls`), which end with the statistics
they report (`CallReports`). Every mode of a run (ragbench._run.modes.run_modes) and `ragbench rescore` set up through
it, each opening what it needs (rescore: no retriever and no system model), and it closes everything it opened,
in the reverse order, whatever way the run ends: an interrupted run (`interrupted`) leaves the engines and the
retriever to the process's exit (a worker thread may still be in one) and does not wait for worker calls still
running.

    with held_services(config, registry, run_dir, lock_now=config.output.resume) as services:
        retrieval = services.open_retrieval()
        resources = services.open_resources(planned)
        engines = services.open_engines(planned)
        services.start_folder(...)
        opened = Opened(resources, engines, services.open_cache(), retrieval)
        value, calls = run_interruptible(services.run_calls(opened, work))   # work(calls) runs the examples
        reports = opened.store_reports(calls)                                 # what results.json's cost reads
        services.close()
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .._components.pooling import Components
from .._config.run_config import RunConfig
from .._cost.prices import model_urls
from .._cost.run_cost import CallReports, ServiceReports
from .._cost.spending_cap import CapStopped, SpendingCap, spending_cap
from .._engines.batches.board import BatchBoard
from .._in_flight import ExamplesInFlight
from .._llm import LLM
from .._nli import NLI
from .._registry import Registry
from .._replay.recording import CALLS_DIR, CallRecorder
from .._retrieval import load_retriever
from .._retrieval.base import Retriever
from .._retrieval.handle import Retrieval
from .._scheduler import Scheduler
from .._storage.cache import ResponseCache
from .._storage.run_record import AttemptCost
from .._storage.rundir import RunDir
from .._values.ceiling import Ceiling
from .._values.json_values import JsonObject
from .lifetime.resources import RunResources
from .models.metric_models import CallRoute, MetricModels
from .models.run_engines import Engines, load_engines
from .plan.planned_task import PlannedTask

T = TypeVar("T")


@dataclass
class ExampleServices:
    """What the run lends each example it runs or scores: the model handles (traced per example by
    `process_example`), the judges and the NLI model for its metrics, the retrieval handle, each task's
    tools, and the run's seed, --strict-infra and the ceiling of each example's steps (ragbench._values.ceiling)."""

    llm: LLM | None = None  # the system's model (None where no system runs: rescoring)
    models: dict[str, LLM] = field(default_factory=dict)  # role models by role
    judges: list[LLM] = field(default_factory=list)
    nli: NLI | None = None
    retrieval: Retrieval | None = None
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)  # by task name (ctx.tools)
    seed: int = 0
    judge_repeats: int | None = None  # each judged metric's scorings per judge (--judge-repeats; None: no raters)
    strict_infra: bool = False
    ceiling: Ceiling = field(default_factory=Ceiling)
    examples: ExamplesInFlight | None = None  # the examples in flight, whose calls the scheduler's batches wait for
    run_folder: Path | None = None  # where the examples' image thumbnails are kept (ragbench._storage.thumbnails)


@dataclass(frozen=True)
class OpenRetrieval:
    """The run's retriever (its index open) and its --reranker and --refiner (their models loaded); `release`
    frees the models when the services close, unless the retrieval handle of the run's calls freed them first
    (`freed`)."""

    retriever: Retriever
    components: Components
    release: ExitStack
    start_seconds: float = 0.0  # the retriever's opening (its index loaded; shard actors started, shards fetched)

    def freed(self) -> None:
        """The components' models were freed (by the retrieval handle that pooled them): not freed again."""
        self.release.pop_all()

    def metadata(self) -> JsonObject:
        return {**self.retriever.metadata(), **self.components.metadata()}

    def contents(self) -> JsonObject:
        return {**self.retriever.contents(), **self.components.contents()}


@dataclass(frozen=True)
class Opened:
    """What a run's calls are made with (`RunServices.run_calls`), each opened by its stage; `retrieval` None:
    the calls search nothing (rescoring)."""

    resources: RunResources
    engines: Engines
    cache: ResponseCache
    retrieval: OpenRetrieval | None = None

    def store_reports(self, calls: CallReports) -> ServiceReports:
        """The services' reports once the calls ended (`calls`), with the response cache's and the page caches'."""
        start = self.retrieval.start_seconds if self.retrieval is not None else None
        return ServiceReports(self.cache.stats(), self.resources.page_caches.report(), calls, start)


@dataclass(frozen=True)
class Calls:
    """Inside the run's loop: the scheduler of the calls, the recorder of every call (calls/), and what every
    example reaches (`example`, its `tools` the caller's to fill)."""

    scheduler: Scheduler
    recorder: CallRecorder
    example: ExampleServices
    batches: BatchBoard  # the run's board of batches out at a vendor's batch API, for its progress bar
    spending: SpendingCap | None = (
        None  # --max-cost's cap, which a system charges the model calls it saw made elsewhere
    )


class RunServices:
    def __init__(self, config: RunConfig, registry: Registry, run_dir: RunDir) -> None:
        self.config, self.registry, self.run_dir = config, registry, run_dir
        self.interrupted = False  # set by a run stopped by a signal: see the module's docstring
        self.batch_board = BatchBoard()  # the batches out at a vendor's batch API: the engines' to write, the bar's
        self._opened = ExitStack()

    def __enter__(self) -> RunServices:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Everything opened closed, in the reverse order (once: closing again does nothing)."""
        self._opened.close()

    def open_retrieval(self) -> OpenRetrieval:
        """The retriever (its index opened: a bad one fails here, timed apart from its searches) and the --reranker
        and --refiner, models loaded."""
        started = time.perf_counter()
        retriever = load_retriever(
            self.config.retrieval.retriever, self.config.retrieval.retriever_args, registry=self.registry
        )
        start_seconds = time.perf_counter() - started
        self._opened.callback(self._unless_interrupted, retriever.close)
        components = Components.configured(self.config.retrieval, self.registry)
        release = self._opened.enter_context(ExitStack())
        release.callback(self._unless_interrupted, components.close)
        return OpenRetrieval(retriever, components, release, start_seconds)

    def open_resources(self, planned: list[PlannedTask]) -> RunResources:
        """The run's resources, every task that works in them bound to them, the worker processes starting
        in the background."""
        resources = RunResources(self.config.retrieval.page_cache)
        self._opened.callback(lambda: resources.close(wait=not self.interrupted))
        for task in planned:
            task.bind(resources)
        resources.workers.prestart()
        return resources

    def open_engines(
        self, planned: list[PlannedTask], system: bool = True, preloading: threading.Thread | None = None
    ) -> Engines:
        """The engines (ragbench._run.models.run_engines), once the imports `preloading` began have ended."""
        if preloading is not None:
            preloading.join()
        say = (
            (lambda line: print(f"ragbench: {line}", file=sys.stderr, flush=True))
            if self.config.output.progress
            else None
        )
        engines = load_engines(self.config.models, self.config.judging, self.registry, planned, system=system, say=say)
        engines.keep_batches(self.run_dir.path, self.batch_board)
        self._opened.callback(self._unless_interrupted, engines.close)
        return engines

    def start_folder(
        self, config: JsonObject, data: JsonObject | None = None, attempt: AttemptCost | None = None
    ) -> None:
        """The run folder started (`RunDir.start`) for the run of `config` (run.json's: `PlannedRun.full_config`), as
        the RunConfig names it and resumes or overwrites, with each task's data fingerprint (`data`) and this
        attempt's cost so far (`attempt`); closed with the rest."""
        run = self.config
        self.run_dir.start(
            config, run.identity(), run.config_hash(), run.output.resume, run.output.overwrite, data, attempt
        )
        self._opened.callback(self.run_dir.close)

    def open_cache(self) -> ResponseCache:
        """The response cache: --cache, else the run folder's cache.sqlite (the run's own)."""
        cache = ResponseCache(
            self.config.output.cache or self.run_dir.path / "cache.sqlite", owned=self.config.output.cache is None
        )
        self._opened.callback(cache.close)
        return cache

    async def run_calls(
        self, opened: Opened, work: Callable[[Calls], Awaitable[T]], system: bool = True
    ) -> tuple[T, CallReports]:
        """`work` inside the run's loop, on the scheduler over the response cache, the call recorder, the model
        handles (the system's with `system`), the judges and NLI model and (with a retriever open) the retrieval
        handle; all closed, the engines' clients too, when it ends, however it ends. Returns what `work`
        returned and what the calls report (`CallReports`). Where --max-cost's cap stops the calls, raises
        `CapStopped` (with the cap: what was spent)."""
        examples = ExamplesInFlight()  # a batch waits until each example in flight has queued its call
        limits, models, judging = self.config.limits, self.config.models, self.config.judging
        urls = model_urls(models, judging, self.registry)  # where the engines send their calls, as they resolved it
        spending = spending_cap(
            limits.max_cost, models, judging, opened.engines, asyncio.current_task(), examples, urls
        )
        try:
            return await self._run_calls(opened, work, system, spending, examples)
        except asyncio.CancelledError:
            if spending is None or not spending.reached:
                raise
            raise CapStopped(spending) from None

    async def _run_calls(
        self,
        opened: Opened,
        work: Callable[[Calls], Awaitable[T]],
        system: bool,
        spending: SpendingCap | None,
        examples: ExamplesInFlight,
    ) -> tuple[T, CallReports]:
        engines, config = opened.engines, self.config
        scheduler = Scheduler(opened.cache, examples=examples, gate=spending)
        recorder = CallRecorder(self.run_dir.path / CALLS_DIR)
        scoring = MetricModels(CallRoute(scheduler, recorder, self.run_dir.path), engines, config.judging.nli_format)
        retrieval = None
        if opened.retrieval is not None:
            retrieval = Retrieval(
                opened.retrieval.retriever,
                Scheduler(examples=examples, searches=True),
                recorder=recorder,
                components=opened.retrieval.components.pooled(Scheduler(examples=examples, searches=True)),
            )
        services = ExampleServices(
            llm=LLM(scheduler, engines.model, recorder=recorder.for_role("model")) if system else None,
            models={
                role: LLM(scheduler, engine, recorder=recorder.for_role(role), role=role)
                for role, engine in engines.roles.items()
            },
            judges=scoring.judges,
            nli=scoring.nli,
            retrieval=retrieval,
            seed=config.what.seed,
            judge_repeats=config.judging.judge_repeats,
            strict_infra=config.limits.strict_infra,
            ceiling=Ceiling.of(config.limits.max_steps_per_example, config.limits.max_prompt_chars_per_example),
            examples=examples,
            run_folder=self.run_dir.path,
        )
        try:
            value = await work(Calls(scheduler, recorder, services, self.batch_board, spending))
        finally:
            recorder.close()
            await scheduler.close()
            if retrieval is not None and opened.retrieval is not None:
                await retrieval.close()  # its pool's components free their models
                opened.retrieval.freed()
            reports = CallReports(
                scheduler.stats.to_dict(),
                retrieval.stats.to_dict() if retrieval is not None else {},
                scoring.nli.stats.to_dict() if scoring.nli is not None else None,
                engines.model.stats() if engines.model is not None else None,
                engines.other_figures(),
            )
            scoring.close()
            await engines.aclose()
        return value, reports

    def _unless_interrupted(self, close: Callable[[], None]) -> None:
        if not self.interrupted:  # else an engine may still be busy in a worker thread: left to the exit
            close()


@contextmanager
def held_services(config: RunConfig, registry: Registry, run_dir: RunDir, lock_now: bool) -> Iterator[RunServices]:
    """The services of a run (a fresh run, a resume, a rescoring: each a mode over them) in `run_dir`, whose lock
    (ragbench._storage.run_lock) is held to the end, however it ends: taken now with `lock_now` (a folder that
    holds the run already), else by `RunDir.start`. The services close first (a mode may close them sooner, once
    it took their reports: `Opened.store_reports`)."""
    with run_dir.held(lock_now=lock_now), RunServices(config, registry, run_dir) as services:
        yield services

"""The services of one run, in one object: the registry and the run folder it was made with, then what it
opens as the run starts (after the pre-flight and the folder's lock) - the retriever and the pipeline
components with their models, the run's resources (worker processes, page caches), the engines, the
response cache - and, inside the run's event loop, the scheduler, the call recorder and the handles every
example reaches (`ExampleServices`). Every mode of a run (ragbench._run.run_modes) and `ragbench rescore` set
up through it, each opening what it needs (rescore: no retriever and no system model), and it closes everything it
opened, in the reverse order, whatever way the run ends: an interrupted run (`interrupted`) leaves the
engines and the retriever to the process's exit (a worker thread may still be in one) and does not wait
for worker calls still running.

    with held_services(config, registry, run_dir, lock_now=config.resume) as services:
        services.open_retrieval()
        services.open_resources(planned)
        engines = services.open_engines(planned)
        ...
        run_interruptible(run(services))       # inside: async with services.calls(...) as calls: ...
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from .._components.pooling import Components
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
from .._storage.rundir import RunDir
from .._values.ceiling import Ceiling
from .._values.run_config import RunConfig
from .metric_models import CallRoute, MetricModels
from .planning import PlannedTask
from .resources import RunResources
from .run_engines import Engines, load_engines


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


class RunServices:
    def __init__(self, config: RunConfig, registry: Registry, run_dir: RunDir) -> None:
        self.config, self.registry, self.run_dir = config, registry, run_dir
        self.retriever: Retriever | None = None
        self.components: Components | None = None
        self.resources: RunResources | None = None
        self.engines: Engines | None = None
        self.cache: ResponseCache | None = None
        self.scheduler: Scheduler | None = None  # the calls' pool, inside the run's loop (`calls`) ...
        self.recorder: CallRecorder | None = None  # ... and the recorder of every call (calls/)
        self.interrupted = False  # set by a run stopped by a signal: see the module's docstring
        self.response_cache_stats: dict[str, Any] | None = None  # taken as the cache closes
        self.page_cache_stats: dict[str, Any] | None = None  # taken as the resources close
        self.retrieval_stats: dict[str, int] = {}  # taken as the retrieval handle closes
        self.nli_stats: dict[str, Any] | None = None  # taken as the NLI model's handle closes
        self.engine_stats: dict[str, Any] | None = None  # the model engine's (Engine.stats), taken as the calls end
        self._opened = ExitStack()
        self._components_freed = False

    def __enter__(self) -> RunServices:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Everything opened closed, in the reverse order (once: closing again does nothing)."""
        self._opened.close()

    def open_retrieval(self) -> tuple[Retriever, Components]:
        """The retriever (its index opened: a bad one fails here) and the --reranker and --refiner, models loaded."""
        self.retriever = load_retriever(self.config.retriever, self.config.retriever_args, registry=self.registry)
        self._opened.callback(self._unless_interrupted, self.retriever.close)
        self.components = Components.configured(self.config, self.registry)
        self._opened.callback(self._unless_interrupted, self._free_components)
        return self.retriever, self.components

    def open_resources(self, planned: list[PlannedTask]) -> RunResources:
        """The run's resources, every task that works in them bound to them, the worker processes starting
        in the background."""
        self.resources = RunResources(self.config.page_cache)
        self._opened.callback(self._close_resources, self.resources)
        for task in planned:
            task.bind(self.resources)
        self.resources.workers.prestart()
        return self.resources

    def open_engines(self, planned: list[PlannedTask], system: bool = True, preloading: Any = None) -> Engines:
        """The engines (ragbench._run.run_engines), once the imports `preloading` began have ended."""
        if preloading is not None:
            preloading.join()
        self.engines = load_engines(self.config.engine_request(), self.registry, planned, system=system)
        self.engines.keep_batches(self.run_dir.path)
        self._opened.callback(self._unless_interrupted, self.engines.close)
        return self.engines

    def start_folder(self, *args: Any, **kwargs: Any) -> None:
        """`RunDir.start` of the run folder (its arguments), closed with the rest."""
        self.run_dir.start(*args, **kwargs)
        self._opened.callback(self.run_dir.close)

    def open_cache(self) -> ResponseCache:
        """The response cache: --cache, else the run folder's cache.sqlite (the run's own)."""
        self.cache = ResponseCache(
            self.config.cache or self.run_dir.path / "cache.sqlite", owned=self.config.cache is None
        )
        self._opened.callback(self._close_cache, self.cache)
        return self.cache

    @asynccontextmanager
    async def calls(self, system: bool = True) -> AsyncIterator[ExampleServices]:
        """Inside the run's loop: the scheduler over the response cache, the call recorder, the model handles,
        the judges and NLI model and (with a retriever open) the retrieval handle, as one `ExampleServices`
        (its `tools` the caller's to fill); all closed, the engines' clients too, when the block ends."""
        assert self.engines is not None and self.cache is not None, "open_engines and open_cache come first"
        examples = ExamplesInFlight()  # a batch waits until each example in flight has queued its call
        scheduler = self.scheduler = Scheduler(self.cache, examples=examples)
        recorder = self.recorder = CallRecorder(self.run_dir.path / CALLS_DIR)
        scoring = MetricModels(CallRoute(scheduler, recorder, self.run_dir.path), self.engines, self.config.nli_format)
        retrieval = None
        if self.retriever is not None and self.components is not None:
            retrieval = Retrieval(
                self.retriever,
                Scheduler(examples=examples, searches=True),
                recorder=recorder,
                components=self.components.pooled(Scheduler(examples=examples, searches=True)),
            )
        services = ExampleServices(
            llm=LLM(scheduler, self.engines.model, recorder=recorder.for_role("model")) if system else None,
            models={
                role: LLM(scheduler, engine, recorder=recorder.for_role(role), role=role)
                for role, engine in self.engines.roles.items()
            },
            judges=scoring.judges,
            nli=scoring.nli,
            retrieval=retrieval,
            seed=self.config.seed,
            judge_repeats=self.config.judge_repeats,
            strict_infra=self.config.strict_infra,
            ceiling=Ceiling.of(self.config.max_steps_per_example, self.config.max_prompt_chars_per_example),
            examples=examples,
        )
        try:
            yield services
        finally:
            recorder.close()
            await scheduler.close()
            if retrieval is not None:
                await retrieval.close()  # its pool's components free their models
                self._components_freed = True
                self.retrieval_stats = retrieval.stats.to_dict()
            self.nli_stats = scoring.nli.stats.to_dict() if scoring.nli is not None else None
            self.engine_stats = self.engines.model.stats() if self.engines.model is not None else None
            scoring.close()
            await self.engines.aclose()

    def _unless_interrupted(self, close: Any) -> None:
        if not self.interrupted:  # else an engine may still be busy in a worker thread: left to the exit
            close()

    def _free_components(self) -> None:
        if self.components is not None and not self._components_freed:  # (a run ended before its examples began)
            self.components.close()

    def _close_resources(self, resources: RunResources) -> None:
        try:
            self.page_cache_stats = resources.page_caches.report()
        finally:
            resources.close(wait=not self.interrupted)

    def _close_cache(self, cache: ResponseCache) -> None:
        try:
            self.response_cache_stats = cache.stats()
        finally:
            cache.close()


@contextmanager
def held_services(config: RunConfig, registry: Registry, run_dir: RunDir, lock_now: bool) -> Iterator[RunServices]:
    """The services of a run (a fresh run, a resume, a rescoring: each a mode over them) in `run_dir`, whose lock
    (ragbench._storage.run_lock) is held to the end, however it ends: taken now with `lock_now` (a folder that
    holds the run already), else by `RunDir.start`. The services close first (a mode may close them sooner: what
    results.json reads of them is taken as they close)."""
    with run_dir.held(lock_now=lock_now), RunServices(config, registry, run_dir) as services:
        yield services

"""Runs of plugin tests: `run_examples` (several examples in flight at once, unscored), `send_requests` (an
engine's requests through a run's scheduler) and `run_eval` (a whole run, as the command line makes it), all in
this process; `sample_lines`, a run folder's sample lines as the run made them."""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from .._apps.running import running
from .._catalog import SINGULAR, Entry, check_kind
from .._checks import Preflight
from .._engines.base import Engine
from .._engines.scripted import ScriptedEngine
from .._errors import ConfigError, RecordError
from .._llm import LLM
from .._records import SampleRecord, read_samples
from .._registry import Registry, installed_registry
from .._retrieval.base import Retriever
from .._retrieval.handle import Retrieval
from .._retrieval.provided import ProvidedRetriever
from .._run.evaluator import Evaluator, RunConfig
from .._run.example import process_example
from .._run.plan.planned_task import PlannedTask
from .._run.plan.planning import run_registry
from .._run.plan.preflight import preflight as run_preflight
from .._run.services import ExampleServices
from .._scheduler import Scheduler
from .._storage.rundir import RunDir
from .._storage.sample_files import sample_file
from .._storage.shared_turns import TurnsReader
from .._system import System
from .._task import Task
from .._types import Example
from .._values.engine_errors import EngineError
from .._values.json_values import JsonObject
from .._values.llm_request import Request
from .._values.llm_responses import Response
from .llms import ScriptedLLM


async def run_examples(
    system: System,
    examples: Iterable[Example],
    llm: LLM,
    task: Task | type[Task] | str = Task,
    *,
    retriever: Retriever | None = None,
    models: dict[str, LLM] | None = None,
    tools: dict[str, Any] | None = None,
    seed: int = 0,
) -> list[SampleRecord]:
    """Several examples in flight at once, each run as a run runs it: one scheduler batches the calls of
    every example to `llm` and to the role `models` (a `ScriptedLLM`'s `batch_sizes` show the batches)
    and one retrieval handle pools their searches of `retriever` (default: each example's own
    documents). No metrics and no run folder: the examples' sample records, in order (`error` and
    `traceback` where the system raised). For a system whose work is shared across examples; one
    example is tested with `make_context`."""
    planned = PlannedTask("examples", task_object(task), system, [])
    scheduler = Scheduler()
    retrieval = Retrieval(retriever or ProvidedRetriever())
    services = ExampleServices(
        llm=LLM(scheduler, llm.engine, llm.defaults),
        models={role: LLM(scheduler, model.engine, model.defaults) for role, model in (models or {}).items()},
        retrieval=retrieval,
        tools={planned.name: dict(tools or {})},
        seed=seed,
    )
    try:
        async with running(system, planned.name):
            samples = await asyncio.gather(
                *(process_example(planned, example, services, example.index) for example in examples)
            )
    finally:
        await scheduler.close()
        await retrieval.close()
    return [sample.record for sample in samples]


async def send_requests(engine: Engine, requests: Iterable[Request]) -> list[Response | EngineError]:
    """`requests` sent at once through one scheduler, as a run's examples in flight send their calls: a batch engine
    gets them in batches of at most its `max_batch_size`, a concurrent one (an HTTP server's) at most
    `max_concurrency` at a time, identical requests share one call. Each request's `Response`, or the `EngineError`
    it failed with, in order; at the end the engine's per-loop resources (an HTTP client) are released, as a run's
    are. For a test of an engine plugin as a run drives it (`engine.generate` answers one batch as given)."""

    async def answer(request: Request) -> Response | EngineError:
        try:
            return await scheduler.submit(engine, request)
        except EngineError as error:
            return error

    scheduler = Scheduler()
    try:
        return list(await asyncio.gather(*(answer(request) for request in requests)))
    finally:
        await scheduler.close()
        aclose = getattr(engine, "aclose", None)  # a hosted engine's client of this event loop
        if aclose is not None:
            await aclose()


def task_object(task: Task | type[Task] | str) -> Task:
    """A task object from a task object, a task class (built without options) or a registered name (of the
    installed plugins, in a registry made for this call)."""
    if isinstance(task, Task):
        return task
    if isinstance(task, str):
        task = installed_registry().load("tasks", task)
    task_class: type[Task] = check_kind(task, "tasks", f"make_context task {task!r}", "the test")
    return task_class()


@dataclass
class EvalResult:
    """What `run_eval` returns: results.json as a dict, and each task's samples in data order."""

    results: JsonObject
    samples: dict[str, list[SampleRecord]]
    run_dir: Path | None  # None: the run was made in a temporary folder, removed since
    # `resume=True` found the run finished with no failed example: nothing ran (the command line's "nothing to resume")
    already_finished: bool = False

    @property
    def scores(self) -> dict[str, dict[str, float | None]]:
        """{task: {metric key: value}} (results.json `results`, as `Results.results` types it)."""
        return cast("dict[str, dict[str, float | None]]", self.results["results"])

    @property
    def complete(self) -> bool:
        """Every example ran and was scored, no record was bad (the command line's exit code 0)."""
        return bool(self.results["complete"])


class _RunComponents:
    """The components a `run_eval` call names: registered names, or classes and scripted LLMs that this
    run's registry gets in addition to the installed plugins (and the hook modules in `plugins`)."""

    def __init__(self, plugins: Iterable[ModuleType]) -> None:
        self.plugins = list(plugins)
        self.added: list[Entry] = []
        self.scripts: list[ScriptedLLM] = []

    def name(self, kind: str, component: Any) -> str:
        if isinstance(component, str):
            return component
        cls = check_kind(component, kind, f"run_eval {SINGULAR[kind]} {component!r}", "the test")
        name: str = cls.name
        if not name:
            raise ConfigError(f"run_eval: {SINGULAR[kind]} class {cls.__qualname__} has no `name`; give it one")
        self.added.append(Entry(kind, name, f"{cls.__module__}:{cls.__qualname__}", provider="run_eval", _loaded=cls))
        return name

    def model(self, model: Any) -> Any:
        if not isinstance(model, ScriptedLLM):
            return model
        self.scripts.append(model)
        return f"scripted_llm:{len(self.scripts) - 1}"

    def registry(self, given: Registry | None) -> Registry:
        """The registry of this call: `given` (default: a new one of the installed plugins) with the hook modules and
        the components of this call."""
        plugins = [(module.__name__, "run_eval", module) for module in self.plugins]
        if given is None:
            registry = Registry.discover(plugins=plugins)
        else:
            registry = given
            if plugins:
                registry.add_plugins(plugins)
        if self.scripts:
            scripts = self.scripts

            class RunEvalScript(ScriptedEngine):
                """A ScriptedLLM given to run_eval: `scripted_llm:N` is the N-th (its batches are the run's)."""

                def __init__(self, model: str, **options: Any) -> None:
                    scripted = scripts[int(model)]
                    super().__init__(
                        model, script=scripted.script, **{"batch_size": scripted.engine.max_batch_size, **options}
                    )
                    self.batch_sizes = scripted.batch_sizes

            self.added.append(
                Entry(
                    "engines",
                    "scripted_llm",
                    "ragbench.testing:ScriptedLLM",
                    provider="run_eval",
                    _loaded=RunEvalScript,
                )
            )
        for entry in self.added:
            registry.entries[entry.kind][entry.name] = entry
        return registry


def run_eval(
    task: Any,
    system: Any = "vanilla",
    model: Any = "scripted:echo",
    *,
    metrics: Sequence[Any] | None = None,
    data: str | Path | dict[str, str | Path] | None = None,
    limit: int | None = None,
    task_args: Mapping[str, object] | None = None,
    system_args: Mapping[str, object] | None = None,
    metric_args: Mapping[str, object] | None = None,
    judges: Sequence[Any] = (),
    nli: Any = None,
    role_models: Mapping[str, object] | None = None,
    output: str | Path | None = None,
    plugins: Iterable[ModuleType] = (),
    registry: Registry | None = None,
    **options: Any,
) -> EvalResult:
    """A whole run in this process, as `ragbench --tasks ... --system ... --model ...` makes it.

    `task` (or a list of them), `system` and each of `metrics`: a registered name, or a class (its `name`
    is registered for this run). `model`, each of `judges`, `nli` (the entailment judge of the metrics that need
    "nli", `--nli`) and the values of `role_models`: an `engine:model` string (`scripted:rules.json`,
    `replay:calls.jsonl` ...) or a `ScriptedLLM`.
    `metrics` None: the tasks' own; else as `--metrics` (names replace them, "+name" adds). `data`: the
    data file of the task (or {task: file}). `plugins`: hook modules registered as if installed (a
    plugin's tests need not install it). `registry`: the registry the run finds its components in (a test's own,
    `Registry.discover(plugins=...)`), which the classes and modules named are added to; None: a new one of the
    installed plugins. `output`: the run folder, kept; None: a temporary one, removed once read. Other keywords are options of the run (`ragbench._config.run_config.RunConfig`: seed,
    max_inflight, retriever, resume ...). Raises `ConfigError` where the command line would refuse: a
    `PreflightError` (a `ConfigError` whose `problems` are its lines) where the run's pre-flight does.
    """
    config, registry = _run_options(
        task,
        system,
        model,
        metrics=metrics,
        data=data,
        limit=limit,
        task_args=task_args,
        system_args=system_args,
        metric_args=metric_args,
        judges=judges,
        nli=nli,
        role_models=role_models,
        plugins=plugins,
        registry=registry,
        **options,
    )
    with tempfile.TemporaryDirectory(prefix="ragbench-run-") as scratch:
        folder = Path(output) if output is not None else Path(scratch) / "run"
        return _evaluated(folder, config, registry, kept=output is not None)


def _evaluated(folder: Path, config: Mapping[str, Any], registry: Registry, kept: bool) -> EvalResult:
    """The run of `config` into `folder`, read back (the folder named in the result where `kept`)."""
    run_config = RunConfig.of(output=str(folder), **config)
    outcome = Evaluator(run_config, registry=run_registry(run_config.what, registry)).run()
    run_dir = RunDir(outcome.run_dir)
    tasks = outcome.typed_results.config["tasks"]  # the run's full configuration: a list of names
    samples = {
        str(name): list(read_samples(run_dir.sample_path(str(name))))
        for name in (tasks if isinstance(tasks, list) else [])
    }
    return EvalResult(outcome.results, samples, folder if kept else None, outcome.already_finished)


def _run_options(
    task: Any,
    system: Any,
    model: Any,
    *,
    metrics: Sequence[Any] | None = None,
    data: str | Path | dict[str, str | Path] | None = None,
    limit: int | None = None,
    task_args: Mapping[str, object] | None = None,
    system_args: Mapping[str, object] | None = None,
    metric_args: Mapping[str, object] | None = None,
    judges: Sequence[Any] = (),
    nli: Any = None,
    role_models: Mapping[str, object] | None = None,
    plugins: Iterable[ModuleType] = (),
    registry: Registry | None = None,
    **options: Any,
) -> tuple[dict[str, Any], Registry]:
    """The options of the run `run_eval` or `preflight` is given (RunConfig's, without `output`) and the registry it
    finds its components in."""
    components = _RunComponents(plugins)
    tasks = [components.name("tasks", t) for t in (task if isinstance(task, (list, tuple)) else [task])]
    if data is not None and not isinstance(data, dict):
        if len(tasks) != 1:
            raise ConfigError("run_eval: data=FILE needs a single task; give data={task: file}")
        data = {tasks[0]: data}
    config = dict(
        tasks=tasks,
        system=components.name("systems", system),
        model=components.model(model),
        metrics=[components.name("metrics", m) for m in metrics or ()],
        judges=[components.model(judge) for judge in judges],
        nli=components.model(nli),
        role_models={role: components.model(m) for role, m in (role_models or {}).items()},
        data={name: str(path) for name, path in (data or {}).items()},
        limit=limit,
        task_args=dict(task_args or {}),
        system_args=dict(system_args or {}),
        metric_args=dict(metric_args or {}),
        progress=False,
        page_cache="off",
    )
    config.update(options)
    return config, components.registry(registry)


def preflight(task: Any, system: Any = "vanilla", model: Any = "scripted:echo", **keywords: Any) -> Preflight:
    """The pre-flight of the run `run_eval(task, system, model, **keywords)` would make, and nothing else: its
    options, every plugin's checks, its data, retriever and engines checked, as a run checks them before it starts,
    but no engine loaded and no example run (`ragbench check` goes on to load the engines). Returns what it checked
    (`checked`, `warnings`: what the run would work around); raises `PreflightError` listing every problem. Nothing is
    written: `output` (default: a temporary folder) is only the run folder checked."""
    output = keywords.pop("output", None)
    config, registry = _run_options(task, system, model, **keywords)
    with tempfile.TemporaryDirectory(prefix="ragbench-preflight-") as scratch:
        folder = Path(output) if output is not None else Path(scratch) / "run"
        run_config = RunConfig.of(output=str(folder), **config)
        return run_preflight(run_config, run_registry(run_config.what, registry)).checks


def sample_lines(run_dir: str | Path, task: str) -> list[Any]:
    """Each line of the run folder's samples/<task>.jsonl, parsed, as the run made it: a sample whose conversation's
    turns are in the run's turns file (`turns_node`) with its turns and prompts read back (docs/outputs.md)."""
    path = sample_file(run_dir, task)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    turns = TurnsReader()
    read = [
        turns.with_turns(line, str(path), number) if isinstance(line, dict) else line
        for number, line in enumerate(lines)
    ]
    failed = next((line for line in read if isinstance(line, RecordError)), None)
    if failed is not None:
        raise ValueError(str(failed))
    return read

"""Helpers for testing plugins: a scripted LLM, a context a system's `run` can be awaited with, a whole
run in one call, and assertions on traces. Nothing here loads a model or touches the network.

    from ragbench.testing import ScriptedLLM, assert_steps, make_context, prompts, run_eval

    async def test_two_step_answers_from_the_first_document():
        ctx = make_context(Capitals(), ScriptedLLM({"capital of France": "Paris"}), docs=[Document(...)])
        prediction = await TwoStep().run(example, ctx)
        assert prediction.answer == "Paris"
        assert_steps(ctx, ["retrieval", "llm:answer"])

    def test_a_whole_run():
        run = run_eval("capitals", "two_step", ScriptedLLM({"France": "Paris", "": "no idea"}), data=FILE)
        assert run.scores["capitals"]["capital_hit"] == 1 / 3
        assert_steps(run.samples["capitals"][0], ["retrieval", "llm:answer"])

`make_context` gives the context a run gives a system (`ctx.llm`, `ctx.model(role)`, `ctx.retriever`,
`ctx.tools`, `ctx.task`, `ctx.judges`), each call traced into `ctx.trace` but sent straight to the
script, without the scheduler. `run_eval` is the command line's run, in this process: the same
planning, pre-flight, scheduler, scoring and results (docs/testing-plugins.md).
"""
from __future__ import annotations

import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Sequence

from .context import Context
from .engines.base import Engine, EngineError, Request, Response
from .engines.scripted import ScriptedEngine, last_text, rule_script
from .errors import ConfigError
from .llm import LLM
from .records import SampleRecord
from .registry import SINGULAR, Entry, Registry, check_kind, get_registry
from .retrieval.base import Retriever
from .retrieval.handle import Retrieval
from .retrieval.provided import ExampleDocs, ProvidedRetriever
from .run.evaluator import Evaluator, RunConfig
from .storage.rundir import RunDir
from .task import Task
from .types import Document, Step, trace_prompts

Script = Callable[[Request], "str | Response | dict[str, Any]"]

__all__ = ["EvalResult", "ScriptedLLM", "assert_steps", "make_context", "prompts", "run_eval"]


class _Unbatched:
    """The scheduler of a unit test: each call goes straight to the engine, on the caller's event loop."""

    async def submit(self, engine: Engine, request: Request) -> Response:
        [result] = engine.generate([request])
        if isinstance(result, Exception):
            raise result
        return result


def _in_order(replies: Sequence[Any]) -> Script:
    pending, lock = list(replies), threading.Lock()

    def answer(request: Request) -> Any:
        with lock:
            if not pending:
                raise EngineError(f"ScriptedLLM: all {len(replies)} scripted replies were used; one more call: "
                                  f"{last_text(request)[:120]!r}")
            return pending.pop(0)

    return answer


def _as_script(script: Any) -> Script:
    if isinstance(script, str):
        return lambda request: script
    if isinstance(script, dict):
        return rule_script(list(script.items()))
    if isinstance(script, (list, tuple)):
        return _in_order(script)
    if callable(script):
        return script
    raise TypeError(f"ScriptedLLM: a script is a reply, a list of replies, a dict of rules or a function, "
                    f"not a {type(script).__name__}")


class ScriptedLLM(LLM):
    """An LLM answered by a script instead of a model; `script` is

    - a string: the reply to every call;
    - a list: the replies in the order the calls are made (for one example in `make_context`; in
      `run_eval` calls of several examples interleave, so use rules or a function there);
    - a dict {regex: reply}: the first regex found in the prompt (a chat's last message) answers, ""
      matches anything; a call no rule matches fails with the prompt named;
    - a function(request) -> reply, given the `ragbench.api.Request` (its prompt or messages and sampling).

    A reply is text (cut at the call's stop strings; log-probabilities, when asked, are those of a
    model certain of every token) or a dict with per-token data (`{"response": text, "tokens": [...],
    "logprobs": [{token: logprob}, ...]}`), as the `scripted` engine takes (docs/engines.md).
    """

    def __init__(self, script: Any) -> None:
        self.script = _as_script(script)
        super().__init__(_Unbatched(), ScriptedEngine("script", script=self.script))  # type: ignore[arg-type]


def _no_llm(request: Request) -> str:
    raise EngineError("this context has no LLM: make_context(task, llm=ScriptedLLM(...))")


def make_context(task: Task | type[Task] | str, llm: LLM | None = None, docs: Iterable[Document] = (), *,
                 retriever: Retriever | None = None, tools: dict[str, Any] | None = None,
                 models: dict[str, LLM] | None = None, judges: Sequence[LLM] = (), seed: int = 0) -> Context:
    """The context of one example, for awaiting a system's `run` (or a metric's `score`) directly.

    `task`: a task object, a task class (built without options) or a registered name. `ctx.retriever`
    answers every query with the first k of `docs`, as the default `provided` retriever does with an
    example's own documents, or searches `retriever`. `models` are the LLMs of a system's roles
    (`ctx.model(role)`), `judges` a judge-based metric's (`ctx.judges`). Every call and search is traced
    in `ctx.trace` (read it with `assert_steps(ctx, ...)` and `prompts(ctx)`).
    """
    ctx = Context(llm=None, task=_task_object(task), seed=seed, tools=dict(tools or {}))  # type: ignore[arg-type]
    ctx.llm = (llm or ScriptedLLM(_no_llm)).traced(ctx.trace)
    ctx.models = {role: model.traced(ctx.trace) for role, model in (models or {}).items()}
    ctx.judges = [judge.traced(ctx.trace) for judge in judges]
    local = retriever if retriever is not None else ExampleDocs(list(docs))
    ctx.retriever = Retrieval(retriever or ProvidedRetriever(), ctx=ctx, local=local)
    return ctx


def _task_object(task: Task | type[Task] | str) -> Task:
    if isinstance(task, Task):
        return task
    if isinstance(task, str):
        task = get_registry().load("tasks", task)
    return check_kind(task, "tasks", f"make_context task {task!r}", "the test")()


@dataclass
class EvalResult:
    """What `run_eval` returns: results.json as a dict, and each task's samples in data order."""

    results: dict[str, Any]
    samples: dict[str, list[SampleRecord]]
    run_dir: Path | None  # None: the run was made in a temporary folder, removed since

    @property
    def scores(self) -> dict[str, dict[str, Any]]:
        """{task: {metric key: value}} (results.json `results`)."""
        return self.results["results"]

    @property
    def complete(self) -> bool:
        """Every example ran and was scored, no record was bad (the command line's exit code 0)."""
        return self.results["complete"]


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
        if not cls.name:
            raise ConfigError(f"run_eval: {SINGULAR[kind]} class {cls.__qualname__} has no `name`; give it one")
        self.added.append(Entry(kind, cls.name, f"{cls.__module__}:{cls.__qualname__}", provider="run_eval",
                                _loaded=cls))
        return cls.name

    def model(self, model: Any) -> Any:
        if not isinstance(model, ScriptedLLM):
            return model
        self.scripts.append(model)
        return f"scripted_llm:{len(self.scripts) - 1}"

    def registry(self) -> Registry:
        if not self.plugins and not self.added and not self.scripts:
            return get_registry()
        registry = Registry.discover(plugins=[(module.__name__, "run_eval", module) for module in self.plugins])
        if self.scripts:
            scripts = self.scripts

            class RunEvalScript(ScriptedEngine):
                """A ScriptedLLM given to run_eval: `scripted_llm:N` is the N-th."""

                def __init__(self, model: str, **options: Any) -> None:
                    super().__init__(model, script=scripts[int(model)].script, **options)

            self.added.append(Entry("engines", "scripted_llm", "ragbench.testing:ScriptedLLM", provider="run_eval",
                                    _loaded=RunEvalScript))
        for entry in self.added:
            registry.entries[entry.kind][entry.name] = entry
        return registry


def run_eval(task: Any, system: Any = "vanilla", model: Any = "scripted:echo", *, metrics: Sequence[Any] | None = None,
             data: str | Path | dict[str, str | Path] | None = None, limit: int | None = None,
             task_args: dict[str, Any] | None = None, system_args: dict[str, Any] | None = None,
             metric_args: dict[str, Any] | None = None, judges: Sequence[Any] = (),
             role_models: dict[str, Any] | None = None, output: str | Path | None = None,
             plugins: Iterable[ModuleType] = (), **options: Any) -> EvalResult:
    """A whole run in this process, as `ragbench --tasks ... --system ... --model ...` makes it.

    `task` (or a list of them), `system` and each of `metrics`: a registered name, or a class (its `name`
    is registered for this run). `model`, each of `judges` and the values of `role_models`: an
    `engine:model` string (`scripted:rules.json`, `replay:calls.jsonl` ...) or a `ScriptedLLM`.
    `metrics` None: the tasks' own; else as `--metrics` (names replace them, "+name" adds). `data`: the
    data file of the task (or {task: file}). `plugins`: hook modules registered as if installed (a
    plugin's tests need not install it). `output`: the run folder, kept; None: a temporary one, removed
    once read. Other keywords are options of the run (`ragbench.run.config.RunConfig`: seed,
    max_inflight, retriever, resume ...). Raises `ConfigError` where the command line would refuse.
    """
    components = _RunComponents(plugins)
    tasks = [components.name("tasks", t) for t in (task if isinstance(task, (list, tuple)) else [task])]
    if data is not None and not isinstance(data, dict):
        if len(tasks) != 1:
            raise ConfigError("run_eval: data=FILE needs a single task; give data={task: file}")
        data = {tasks[0]: data}
    config = dict(
        tasks=tasks, system=components.name("systems", system), model=components.model(model),
        metrics=[components.name("metrics", m) for m in metrics or ()],
        judges=[components.model(judge) for judge in judges],
        role_models={role: components.model(m) for role, m in (role_models or {}).items()},
        data={name: str(path) for name, path in (data or {}).items()}, limit=limit, task_args=dict(task_args or {}),
        system_args=dict(system_args or {}), metric_args=dict(metric_args or {}), progress=False,
        page_cache="off")
    config.update(options)
    registry = components.registry()
    with tempfile.TemporaryDirectory(prefix="ragbench-run-") as scratch:
        folder = Path(output) if output is not None else Path(scratch) / "run"
        outcome = Evaluator(RunConfig(output=str(folder), **config), registry=registry).run()
        run_dir = RunDir(outcome.run_dir)
        samples = {name: [SampleRecord.from_dict(record) for record in run_dir.samples(name)]
                   for name in outcome.results["config"]["tasks"]}
    return EvalResult(outcome.results, samples, folder if output is not None else None)


def _steps(of: SampleRecord | Context | Iterable[Step]) -> list[Step]:
    return list(of.trace) if isinstance(of, (SampleRecord, Context)) else list(of)


def assert_steps(of: SampleRecord | Context | Iterable[Step], expected: Sequence[str]) -> None:
    """The steps of a sample (or of a context's trace) are `expected`, in order: each item is a step's
    kind ("llm", "retrieval", "tool"), its name ("answer") or both ("llm:answer")."""
    steps = _steps(of)
    if len(steps) != len(expected) or not all(
            item in (step.kind, step.name, f"{step.kind}:{step.name}") for item, step in zip(expected, steps)):
        raise AssertionError(f"steps: expected {list(expected)}, got {[f'{s.kind}:{s.name}' for s in steps]}")


def prompts(of: SampleRecord | Context | Iterable[Step]) -> list[Any]:
    """The prompt (or chat messages) of every LLM call, in call order."""
    if isinstance(of, SampleRecord):
        return of.prompts
    return trace_prompts(step.to_dict() for step in _steps(of))

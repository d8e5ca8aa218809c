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
`ctx.tools`, `ctx.task`, `ctx.judges`, `ctx.nli`), each call traced into `ctx.trace` but sent straight
to the script, without the scheduler. `run_examples` runs several examples at once through a scheduler,
as a run has them, unscored, and `send_requests` an engine's requests through one; `run_eval` is the command
line's run, in this process: the same planning, pre-flight, scheduler, scoring and results
(docs/testing-plugins.md), raising `RunInterrupted` where a signal stops it (its samples saved, as a run's
on Ctrl-C: a test of a plugin's `--resume` stops a run so), and `preflight` that run's pre-flight alone (what a plugin's `Preflight` checks refuse, before any engine loads). `installed_registry`, `Registry`,
`load_engine`, `build_index`, `build_shards` (an index built in shards, as `index build --ray --shards` builds it,
its steps in this process) and `load_retriever` give components by their catalogue names, `embedded_model` the
shipped model's folder, `cli` is the `ragbench` command for `click.testing.CliRunner`, `cli_here` runs a `ragbench`
command in this process as a fresh process runs it (its exit status and output captured, the process state it
changes put back: `commands`), `sample_lines` a run
folder's sample lines as the run made them; `task_results` aggregates a task's sample records with its metrics as a run does. The scripted and replayed LLMs are in `llms`, the runs in
`runs`, the components in `components`, the aggregation in `scores`; import all of them from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .._checks import PreflightError
from .._context import Context
from .._llm import LLM
from .._nli import NLI
from .._records import SampleRecord
from .._retrieval.base import Retriever
from .._retrieval.handle import Retrieval
from .._retrieval.provided import ExampleDocs, ProvidedRetriever
from .._run.lifetime.interrupted import RunInterrupted
from .._run.lifetime.resources import RunResources
from .._task import Task
from .._task.protocols import UsesRunResources
from .._types import Document, Step, trace_prompts
from .._values.ceiling import Ceiling, ExampleCeiling
from .._values.engine_errors import EngineError
from .._values.llm_request import Request
from .commands import cli_here
from .components import (
    Registry,
    build_index,
    build_shards,
    embedded_model,
    installed_registry,
    load_engine,
    load_retriever,
)
from .gate import assert_no_regression, gate_runs
from .llms import ReplayLLM, ScriptedLLM
from .runs import EvalResult, preflight, run_eval, run_examples, sample_lines, send_requests, task_object
from .scores import task_results

if TYPE_CHECKING:  # imported on first use (below): the command line's modules are not every test's
    from .._cli.main import main as cli

__all__ = [
    "EvalResult",
    "PreflightError",
    "Registry",
    "ReplayLLM",
    "RunInterrupted",
    "ScriptedLLM",
    "assert_no_regression",
    "assert_steps",
    "build_index",
    "build_shards",
    "cli",
    "cli_here",
    "embedded_model",
    "gate_runs",
    "installed_registry",
    "load_engine",
    "load_retriever",
    "make_context",
    "preflight",
    "prompts",
    "run_eval",
    "run_examples",
    "sample_lines",
    "send_requests",
    "task_results",
]


def __getattr__(name: str) -> Any:
    """`cli`: the `ragbench` command (a click group), for `click.testing.CliRunner().invoke(cli, [...])` in this
    process, as the console script runs it but without its guards of stop signals and the console."""
    if name == "cli":
        from .._cli.main import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _no_llm(request: Request) -> str:
    raise EngineError("this context has no LLM: make_context(task, llm=ScriptedLLM(...))")


def make_context(
    task: Task | type[Task] | str,
    llm: LLM | None = None,
    docs: Iterable[Document] = (),
    *,
    retriever: Retriever | None = None,
    tools: dict[str, Any] | None = None,
    models: dict[str, LLM] | None = None,
    judges: Sequence[LLM] = (),
    nli: NLI | None = None,
    seed: int = 0,
    resources: RunResources | None = None,
) -> Context:
    """The context of one example, for awaiting a system's `run` (or a metric's `score`) directly.

    `task`: a task object, a task class (built without options) or a registered name. `ctx.retriever`
    answers every query with the first k of `docs`, as the default `provided` retriever does with an
    example's own documents, or searches `retriever`. `models` are the LLMs of a system's roles
    (`ctx.model(role)`), `judges` a judge-based metric's (`ctx.judges`), `nli` an NLI metric's
    (`ctx.nli`: any object with NLI's `entails`). Every call and search is traced in `ctx.trace` (read it
    with `assert_steps(ctx, ...)` and `prompts(ctx)`). `resources` (a `RunResources` the test opens and
    closes, `with RunResources() as resources:`) is `ctx.resources`, for a system that works in it (worker
    processes, page caches, shared models), and is bound to a task that works in it (`UsesRunResources.bind`),
    as a run does. Its steps count against a run's default ceiling (docs/running.md, "Every example's
    ceiling"): a system that loops without end raises `CeilingReached` there instead of running on.
    """
    task = task_object(task)
    if resources is not None and isinstance(task, UsesRunResources):
        task.bind(resources)
    ceiling = ExampleCeiling(Ceiling(), "the system")
    trace: list[Step] = []  # every call and search of the context's handles
    ctx = Context(
        llm=(llm or ScriptedLLM(_no_llm)).traced(trace, ceiling=ceiling),
        task=task,
        seed=seed,
        trace=trace,
        tools=dict(tools or {}),
        nli=nli,
        resources=resources,
        ceiling=ceiling,
    )
    ctx.models = {role: model.traced(ctx.trace, ceiling=ceiling) for role, model in (models or {}).items()}
    ctx.judges = [judge.traced(ctx.trace, ceiling=ceiling) for judge in judges]
    local = retriever if retriever is not None else ExampleDocs(list(docs))
    ctx.retriever = Retrieval(retriever or ProvidedRetriever(), ctx=ctx, local=local)
    return ctx


def _steps(of: SampleRecord | Context | Iterable[Step]) -> list[Step]:
    return list(of.trace) if isinstance(of, (SampleRecord, Context)) else list(of)


def assert_steps(of: SampleRecord | Context | Iterable[Step], expected: Sequence[str]) -> None:
    """The steps of a sample (or of a context's trace) are `expected`, in order: each item is a step's
    kind ("llm", "retrieval", "tool"), its name ("answer") or both ("llm:answer")."""
    steps = _steps(of)
    if len(steps) != len(expected) or not all(
        item in (step.kind, step.name, f"{step.kind}:{step.name}") for item, step in zip(expected, steps)
    ):
        raise AssertionError(f"steps: expected {list(expected)}, got {[f'{s.kind}:{s.name}' for s in steps]}")


def prompts(of: SampleRecord | Context | Iterable[Step]) -> list[Any]:
    """The prompt (or chat messages) of every LLM call, in call order."""
    if isinstance(of, SampleRecord):
        return of.prompts
    return trace_prompts(step.to_dict() for step in _steps(of))

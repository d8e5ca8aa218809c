"""The plugin contract's surface: a system or metric says what the core reads about it in one declared value
(`declares`), a task its scoring in one `TaskScoring`, so its author sees a handful of names and one way to write
each fact; a fact set by its own name beside it, which nothing would read, is refused where it is written."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api import (
    Metric,
    MetricDeclaration,
    Prediction,
    ScoringContext,
    System,
    SystemDeclaration,
    Task,
    TaskScoring,
)
from ragbench.api.trace import outline
from ragbench.testing import ScriptedLLM, installed_registry, run_eval
from support.viewer_pages import viewer_page

RUN_OPTIONS = {"topk": 5, "rounds": 3}


def public(plugin: object) -> list[str]:
    """The names a plugin's author sees on it, less an instance's own options."""
    own = vars(plugin) if not isinstance(plugin, type) else {}
    return sorted(name for name in dir(plugin) if not name.startswith("_") and name not in own)


class NewSystem(System):
    name = "new_system"
    declares = SystemDeclaration(
        retrieves=True, budget_options={"passages": "topk", "searches": "rounds"}, prompt_style="flashrag"
    )

    def __init__(self, topk: int = 5, rounds: int = 3) -> None:
        self.topk, self.rounds = topk, rounds


class NewMetric(Metric):
    name = "new_metric"
    declares = MetricDeclaration(keys=("a", "b"), needs=("judge",), value_range=(0, 1))


def test_a_plugin_written_the_new_way_sees_at_most_eight_public_names():
    assert public(NewSystem()) == public(NewSystem) == [
        "check", "check_model", "config", "declares", "engine_needs", "name", "preflight", "run",
    ]  # fmt: skip
    assert public(NewMetric()) == public(NewMetric) == [
        "aggregate", "config", "corpus", "declares", "key_prefix", "name", "preflight", "score",
    ]  # fmt: skip


def test_a_budget_no_core_reads_is_refused_however_it_is_declared():
    with pytest.raises(TypeError, match="budget_options names rounds: a budget is one of passages, searches"):
        SystemDeclaration(budget_options={"rounds": "max_iter"})


names = st.text("abcdefgh_", min_size=1, max_size=6)
CONTRACTS = {System: SystemDeclaration, Metric: MetricDeclaration, Task: TaskScoring}
facts = st.sampled_from([(base, field.name) for base, kind in CONTRACTS.items() for field in dataclasses.fields(kind)])


@settings(max_examples=40, deadline=None)
@given(facts, names)
def test_a_fact_set_by_its_own_name_is_refused_where_it_is_written(fact, other):
    """On the class statement or by an instance's assignment, whichever fact of its declaration: a TypeError
    naming the one way to declare it; any other attribute is the plugin's own."""
    base, name = fact
    attribute = "scoring" if base is Task else "declares"
    kind = CONTRACTS[base].__name__
    with pytest.raises(TypeError, match=rf"Old sets {name} by name, which nothing reads: .*`{attribute} = {kind}"):
        type("Old", (base,), {name: ()})

    class Plain(base):  # type: ignore[valid-type,misc]
        pass

    plugin = Plain()
    setattr(plugin, f"{name}_{other}", 1)  # an option of its own
    with pytest.raises(TypeError, match=rf"`self.{attribute} = dataclasses.replace\(self.{attribute}, ...\)`"):
        setattr(plugin, name, ())
    assert getattr(plugin, attribute) == getattr(base, attribute)


class Switch(System):
    name = "switch"
    declares = SystemDeclaration(retrieves=True, budget_options={"passages": "topk"})

    def __init__(self, retrieve: bool = True, topk: int = 5) -> None:
        self.topk = topk
        if not retrieve:  # an option turns retrieval off
            self.declares = dataclasses.replace(self.declares, retrieves=False)

    async def run(self, example, ctx):
        return Prediction(example.id, answer="x")


class Keyed(Metric):
    name = "keyed"
    declares = MetricDeclaration(keys=("a", "b"), value_range=(0, 1))

    def score(self, example, prediction, ctx=None):
        return {"a": 1, "b": 0}


def test_an_instance_s_own_declaration_is_what_the_core_reads():
    """And what a run records of it: the budget it runs with (run.json's and results.json's `like_for_like`), its
    prompt style the task's family (the demo task's prompts are Self-RAG's)."""
    assert Switch().declares.retrieves and not Switch(retrieve=False).declares.retrieves and Switch.declares.retrieves
    run = run_eval("demo", Switch, metrics=[Keyed], system_args={"topk": 3}, limit=1, bootstrap_iters=0)
    assert run.results["config"]["like_for_like"] == {"demo": {"passages": 3, "prompt_style": "selfrag"}}
    assert Switch(retrieve=False).config() == {"topk": 5}


def test_the_members_that_left_the_bases_are_gone():
    system, metric = NewSystem(), NewMetric()
    for plugin, name in [
        (system, "retrieves"),
        (system, "like_for_like"),
        (system, "statistics"),
        (system, "trace_outline"),
        (metric, "needs"),
        (metric, "reported_keys"),
        (ScoringContext(task=Task()), "llm"),
        (ScoringContext(task=Task()), "retriever"),
    ]:
        with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
            getattr(plugin, name)
    run = run_eval("demo", Switch, metrics=[Keyed], metric_args={"keyed.key_prefix": "x_"}, limit=1, bootstrap_iters=0)
    assert run.scores["demo"] == {"x_a": 1.0, "x_b": 0.0}  # the core reports a metric's keys with its prefix


def test_every_built_in_plugin_declares_the_one_way():
    """Every registered built-in system, metric and task loads (an `hf:` metric's class too; its instance loads an
    `evaluate` module), and an instance of each that takes no required option is made (a fact by its own name
    would raise on either)."""
    registry = installed_registry()
    classes = [registry.load(kind, name) for kind in ("systems", "metrics", "tasks") for name in registry.names(kind)]
    assert registry.metric_class("hf:bleu") is not None
    required = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    plain = [
        cls
        for cls in classes
        if not any(p.default is p.empty and p.kind in required for p in inspect.signature(cls).parameters.values())
    ]
    assert all(cls() is not None for cls in plain)
    assert len(classes) > 100 and len(plain) > 90  # the registry was read whole


GROUPS = [["it 1"], ["it 1", "verify"], ["it 2"], [], ["it 2"]]


class Grouped(System):
    """Steps in groups on the first example (as a loop of iterations with a check marks them), none on the next."""

    name = "grouped"

    async def run(self, example, ctx):
        for labels in GROUPS if example.index == 0 else []:
            with contextlib.ExitStack() as groups:
                for label in labels:
                    groups.enter_context(ctx.group(label))
                await ctx.llm.generate("q")
        return Prediction(example.id, answer="x")


def test_a_system_without_a_trace_outline_of_its_own_gets_the_outline_of_its_groups(tmp_path):
    """The viewer's timeline of a system with no `trace_outline` hook: the tree of its steps' groups; none for an
    example without steps."""
    registry = installed_registry()  # the run's, with Grouped in it: the viewer finds the system's class there
    run = run_eval("demo", Grouped, ScriptedLLM("x"), limit=2, output=tmp_path / "run", registry=registry)
    grouped, plain = (viewer_page([run.run_dir], f"example/{{rid}}/demo/{i}", registry) for i in (0, 1))
    assert [step.group for step in run.samples["demo"][0].trace] == GROUPS
    assert grouped["outline"] == outline(run.samples["demo"][0].trace) and plain["outline"] == []

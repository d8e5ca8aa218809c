"""The plugin contract's surface: a system or metric says what the core reads about it in one declared value
(`declares`), a task its scoring in one `TaskScoring`, so its author sees a handful of names and one way to write
each fact; a fact set by its own name beside it, which nothing would read, is refused where it is written."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._metric import reported_keys
from ragbench._system import like_for_like, trace_outline
from ragbench.api import (
    Metric,
    MetricDeclaration,
    SampleRecord,
    ScoringContext,
    Step,
    System,
    SystemDeclaration,
    Task,
    TaskScoring,
)
from ragbench.api.trace import outline
from ragbench.testing import installed_registry

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


def test_an_instance_s_own_declaration_is_what_the_core_reads():
    class Switch(System):
        name = "switch"
        declares = SystemDeclaration(retrieves=True, budget_options={"passages": "topk"})

        def __init__(self, retrieve: bool = True, topk: int = 5) -> None:
            self.topk = topk
            if not retrieve:  # an option turns retrieval off
                self.declares = dataclasses.replace(self.declares, retrieves=False)

    assert Switch().declares.retrieves and not Switch(retrieve=False).declares.retrieves and Switch.declares.retrieves
    assert like_for_like(Switch(topk=3)) == {"passages": 3, "prompt_style": "task"}
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
    assert trace_outline(system, SampleRecord("q", trace=[])) == []
    metric.key_prefix = "x_"
    assert reported_keys(metric) == {"x_a": "a", "x_b": "b"}


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


def test_a_system_without_a_trace_outline_of_its_own_gets_the_outline_of_its_groups():
    """The viewer's timeline of a system with no `trace_outline` hook: the tree of its steps' groups."""
    trace = [Step("llm", "s", {}, group=labels) for labels in (["it 1"], ["it 1", "verify"], ["it 2"], [], ["it 2"])]
    assert trace_outline(System, SampleRecord("q", trace=trace)) == outline(trace)

"""The plugin contract's surface: a system or metric says what the core reads about it in one declared value
(`declares`), so its author sees a handful of names; one written before, each fact by its own name, runs the
same with a DeprecationWarning once per class."""

from __future__ import annotations

import dataclasses
import inspect
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._metric import reported_keys
from ragbench._registry import installed_registry
from ragbench._system import BUDGETS, declared, like_for_like, trace_outline
from ragbench.api import Example, Metric, MetricDeclaration, Prediction, SampleRecord, System, SystemDeclaration

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


def old_system() -> type[System]:
    class OldSystem(System):
        name = "old_system"
        retrieves = True
        budget_options = {"passages": "topk", "searches": "rounds"}
        prompt_style = "flashrag"

        def __init__(self, topk: int = 5, rounds: int = 3) -> None:
            self.topk, self.rounds = topk, rounds

    return OldSystem


def test_a_system_declaring_each_fact_by_name_runs_the_same_and_is_warned_about_once():
    with pytest.warns(DeprecationWarning, match="OldSystem declares budget_options, prompt_style, retrieves by name"):
        OldSystem = old_system()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per class: not again for its instances, nor what the core reads
        old, new = OldSystem(), NewSystem()
        assert declared(old) == declared(OldSystem) == declared(new)
        assert like_for_like(old) == like_for_like(new) == {"passages": 5, "searches": 3, "prompt_style": "flashrag"}
        assert old.config() == new.config() == RUN_OPTIONS
        assert old.retrieves is True  # its own code reads its own attributes as before


def test_an_instance_s_own_value_of_an_old_name_is_what_the_core_reads():
    with pytest.warns(DeprecationWarning):

        class Switch(System):
            name = "switch"

            def __init__(self, retrieve: bool = True) -> None:
                self.retrieve = retrieve

            @property
            def retrieves(self) -> bool:  # an option turns retrieval off
                return self.retrieve

    assert declared(Switch(retrieve=True)).retrieves and not declared(Switch(retrieve=False)).retrieves
    assert not declared(Switch).retrieves  # a class's property is an instance's value: the default for the class

    with pytest.warns(DeprecationWarning, match="Assigned declares searches_own_queries by name"):

        class Assigned(System):
            name = "assigned"

            def __init__(self) -> None:
                self.searches_own_queries = True

        one = Assigned()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per class, not per instance
        assert declared(Assigned()).searches_own_queries
    assert declared(one).searches_own_queries and not declared(Assigned).searches_own_queries
    assert "declares" not in one.config() and one.config() == {"searches_own_queries": True}


def test_a_subclass_declaring_the_new_way_replaces_what_its_parent_declared_by_name():
    with pytest.warns(DeprecationWarning):
        OldSystem = old_system()

    class Closed(OldSystem):  # type: ignore[misc,valid-type]
        declares = SystemDeclaration(prompt_style="task")

    assert declared(Closed()) == SystemDeclaration(prompt_style="task")


def test_the_members_that_left_the_bases_still_answer_with_a_deprecation_warning():
    system, metric = NewSystem(), NewMetric()
    metric.key_prefix = "x_"
    with pytest.warns(DeprecationWarning, match=r"NewSystem.retrieves is deprecated: use its `declares.retrieves`"):
        assert system.retrieves is True
    with pytest.warns(DeprecationWarning, match="like_for_like is deprecated"):
        assert system.like_for_like() == like_for_like(system)
    with pytest.warns(DeprecationWarning, match="statistics is deprecated"):
        assert system.statistics([]) is None
    record = SampleRecord("q", trace=[])
    with pytest.warns(DeprecationWarning, match="trace_outline is deprecated"):
        assert system.trace_outline(record) == trace_outline(system, record)
    with pytest.warns(DeprecationWarning, match="NewMetric.needs is deprecated"):
        assert metric.needs == ("judge",)
    with pytest.warns(DeprecationWarning, match="reported_keys is deprecated"):
        assert metric.reported_keys() == reported_keys(metric) == {"x_a": "a", "x_b": "b"}
    with pytest.raises(AttributeError, match="has no attribute 'retreives'"):
        system.retreives  # noqa: B018 - a misspelt name is no deprecated one


def test_a_metric_declaring_keys_by_name_in_init_scores_as_before():
    with pytest.warns(DeprecationWarning, match="PerK declares keys by name"):

        class PerK(Metric):
            name = "per_k"

            def __init__(self, k: int = 2) -> None:
                self.keys = tuple(f"hit_at_{i}" for i in range(1, k + 1))

            def score(self, example: Example, prediction: Prediction, ctx: object = None) -> dict[str, float]:
                return dict.fromkeys(self.keys, 1.0)

        three = PerK(k=3)
    assert reported_keys(three) == {key: key for key in ("hit_at_1", "hit_at_2", "hit_at_3")}
    assert reported_keys(PerK(k=1)) == {"hit_at_1": "hit_at_1"} and PerK.declares.keys == ()


def test_a_budget_no_core_reads_is_refused_however_it_is_declared():
    with pytest.raises(TypeError, match="budget_options names rounds: a budget is one of passages, searches"):
        SystemDeclaration(budget_options={"rounds": "max_iter"})


names = st.text("abcdefgh_", min_size=1, max_size=6)
declarations = st.builds(
    SystemDeclaration,
    retrieves=st.booleans(),
    searches_own_queries=st.booleans(),
    budget_options=st.dictionaries(st.sampled_from(BUDGETS), names),
    prompt_style=names,
    own_defaults=st.lists(names, max_size=3).map(tuple),
    roles=st.lists(names, max_size=3).map(tuple),
    uses_llm=st.booleans(),
)


@settings(max_examples=40, deadline=None)
@given(declarations, st.data())
def test_any_facts_declared_by_name_read_as_the_same_declaration(declaration, data):
    """Whichever fields a system sets by their old names, on the class or its instance, the core reads what a
    system declaring them the new way declares."""
    fields = {field.name: getattr(declaration, field.name) for field in dataclasses.fields(declaration)}
    on_class = data.draw(st.sets(st.sampled_from(sorted(fields))))
    on_instance = {name: value for name, value in fields.items() if name not in on_class and name != "uses_llm"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        Old = type("Old", (System,), {name: fields[name] for name in on_class})
        old = Old()
        for name, value in on_instance.items():
            setattr(old, name, value)
    expected = dataclasses.replace(SystemDeclaration(), **{name: fields[name] for name in on_class})
    assert declared(Old) == expected
    assert declared(old) == dataclasses.replace(expected, **on_instance)


# ragbench's warnings for a fact declared, or read, by its old name
OLD_NAME_WARNINGS = r"(?s).*( by name: set `declares = | is deprecated: use its `declares\.)"


def built_in_plugins() -> tuple[list[type], list[object]]:
    """Every registered built-in system and metric class, and an instance of each that takes no required
    option; an `hf:` metric's class too (its instance loads an `evaluate` module)."""
    registry = installed_registry()
    kinds = ("systems", "metrics")
    classes = [registry.load(kind, name) for kind in kinds for name in registry.names(kind)]
    required = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    plain = [
        cls
        for cls in classes
        if not any(p.default is p.empty and p.kind in required for p in inspect.signature(cls).parameters.values())
    ]
    return [*classes, registry.metric_class("hf:bleu")], [cls() for cls in plain]


def test_no_built_in_system_or_metric_declares_a_fact_by_its_old_name():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", OLD_NAME_WARNINGS, DeprecationWarning)
        classes, instances = built_in_plugins()
    old_names = {
        field.name for field in (*dataclasses.fields(SystemDeclaration), *dataclasses.fields(MetricDeclaration))
    }
    # set on a class or an instance, as an earlier import in this process would have warned about already
    on_classes = {
        f"{owner.__module__}.{owner.__qualname__}": sorted(old_names & set(vars(owner)))
        for cls in classes
        for owner in cls.__mro__
        if owner not in (System, Metric) and old_names & set(vars(owner))
    }
    on_instances = {
        type(i).__qualname__: sorted(old_names & set(vars(i))) for i in instances if old_names & set(vars(i))
    }
    assert on_classes == on_instances == {}
    assert len(classes) > 60 and len(instances) > 60  # the registry was read whole

"""No contract class shares a mutable default: writing into one class's mapping cannot change another's."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import MutableMapping, MutableSequence, MutableSet

import pytest

from ragbench.api import Metric, MetricDeclaration, Task, TaskScoring

PACKAGES = ("ragbench", "ragbench.plugins", "ragbench.tasks", "ragbench.metrics")
# Containers libraries write on classes they make, not defaults of ours: a NamedTuple's `_field_defaults`
# (collections.namedtuple), a PyYAML loader's own `yaml_constructors` (its `add_constructor` copies the table
# into the subclass it registers on), an Enum's member tables (enum.EnumType fills them for each Enum class).
LIBRARY_OWNED = {
    "_field_defaults",
    "yaml_constructors",
    "_member_names_",
    "_member_map_",
    "_value2member_map_",
    "_unhashable_values_",
}


def test_a_task_writing_into_its_inherited_metric_options_is_refused_and_others_are_unaffected():
    class Plain(Task):
        name = "plain"

    class Other(Task):
        name = "other"

    with pytest.raises(TypeError):
        Plain.scoring.metric_options["f1"] = {"strip": True}
    assert dict(Other.scoring.metric_options) == {} and dict(Task.scoring.metric_options) == {}


def test_a_task_s_own_metric_options_are_read_only_and_its_own():
    class Declared(Task):
        name = "declared"
        scoring = TaskScoring(metric_options={"f1": {"strip": True}})

    class Sibling(Task):
        name = "sibling"
        scoring = TaskScoring(metric_options={"f1": {"strip": False}})

    with pytest.raises(TypeError):
        Declared.scoring.metric_options["em"] = {}
    with pytest.raises(TypeError):
        Declared.scoring.metric_options["f1"]["strip"] = False
    assert Declared.scoring.metric_options == {"f1": {"strip": True}} and Sibling.scoring.metric_options == {
        "f1": {"strip": False}
    }


def test_an_instance_assigns_metric_options_of_its_own():
    class PerInstance(Task):
        name = "per_instance"

    first = PerInstance()
    first.scoring = dataclasses.replace(first.scoring, metric_options={"f1": {"k": 1}})
    assert PerInstance().scoring.metric_options == {} and first.scoring.metric_options == {"f1": {"k": 1}}


@pytest.mark.parametrize("attribute", ["key_specs", "counters", "human_labels_for"])
def test_metric_mappings_are_not_shared(attribute):
    class One(Metric):
        name = "one"

    class Two(Metric):
        name = "two"
        declares = MetricDeclaration(**{attribute: {"event": "what it means"}})

    with pytest.raises(TypeError):
        getattr(One.declares, attribute)["x"] = "y"
    with pytest.raises(TypeError):
        getattr(Two.declares, attribute)["other"] = "y"
    assert dict(getattr(Metric.declares, attribute)) == {}
    assert dict(getattr(Two.declares, attribute)) == {"event": "what it means"}


def every_module():
    """Every module of the installed ragbench package and of its built-in plugin packages (not `__main__`,
    which runs the command line)."""
    for root in PACKAGES:
        package = importlib.import_module(root)
        yield package
        for info in pkgutil.walk_packages(package.__path__, f"{root}."):
            if not info.name.endswith(".__main__"):
                yield importlib.import_module(info.name)


def test_no_class_of_ragbench_or_its_plugins_has_a_mutable_container_as_a_default():
    shared = []
    for module in every_module():
        for cls in vars(module).values():
            if not isinstance(cls, type) or cls.__module__ != module.__name__:
                continue
            shared += [
                f"{module.__name__}.{cls.__qualname__}.{name}: {type(value).__name__}"
                for name, value in vars(cls).items()
                if not (name.startswith("__") and name.endswith("__"))
                and name not in LIBRARY_OWNED
                and isinstance(value, (MutableMapping, MutableSequence, MutableSet))
            ]
    assert shared == []

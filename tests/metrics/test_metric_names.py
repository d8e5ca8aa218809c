"""How a run's metric names combine (--metrics NAME replaces the task's own, +NAME adds, TASK:NAME scopes to one task;
ragbench._run.plan.metric_plan.metric_names), a metric's fit to a task class and to its instance (ragbench._metric.fits)
and `ragbench list`'s count of tasks by group: units. What a run and the command line make of them:
test_metric_selection.py."""

from __future__ import annotations

from ragbench._metric import fits
from ragbench._run.plan.metric_plan import metric_names
from ragbench.testing import installed_registry


def test_metrics_replace_or_add_to_the_tasks_own():
    own = ("match", "em")
    assert metric_names(own, []) == ["match", "em"]
    assert metric_names(own, ["f1"]) == ["f1"]
    assert metric_names(own, ["+f1", "+match"]) == ["match", "em", "f1"]
    assert metric_names(own, ["f1", "+llm_judge"]) == ["f1", "llm_judge"]
    assert metric_names(own, ["+hf:bleu"], "demo", ["demo"]) == ["match", "em", "hf:bleu"]  # hf: is no task


def test_a_metric_can_be_scoped_to_one_task_of_the_run():
    tasks = ["popqa", "arc_challenge"]
    chosen = ["+length", "arc_challenge:+choice_accuracy", "popqa:em", "popqa:hf:bleu"]
    assert metric_names(("match",), chosen, "arc_challenge", tasks) == ["match", "length", "choice_accuracy"]
    assert metric_names(("match",), chosen, "popqa", tasks) == ["em", "hf:bleu", "length"]


def test_counts_by_group_puts_a_task_in_its_largest_group_once():
    from ragbench._cli.main import counts_by_group

    groups = {"small": ["a"], "large": ["a", "b", "c"], "empty": []}
    assert counts_by_group(["a", "b", "z"], groups) == {"large": 2, "other": 1}


def test_what_a_task_class_says_it_fits_is_what_its_instance_fits():
    """`ragbench list` judges task classes (never instantiated), the run their instances: both alike, for every
    installed task and metric (every installed task class instantiates without options)."""
    registry = installed_registry()
    for name in registry.names("tasks"):
        cls = registry.load("tasks", name)
        task = cls()
        for metric in registry.names("metrics"):
            metric_class = registry.load("metrics", metric)
            assert fits(metric_class, cls) == fits(metric_class, task), (name, metric)

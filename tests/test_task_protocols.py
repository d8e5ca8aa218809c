"""What one benchmark needs is an optional protocol its task implements, not a member of every task: a
plain task runs without any, and the run lends its resources, starts the tools and stops them only for
a task that uses tools."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api import Example, Prediction, System, Task, TaskPrompting
from ragbench.api.protocols import (
    StandingInstruction,
    UsesRunResources,
    UsesTools,
    closed_answer,
    instruction_key,
    task_demonstration,
    task_input,
)
from ragbench.testing import run_eval

BENCHMARK_MEMBERS = (
    "plot_keys",
    "bind",
    "setup",
    "teardown",
    "tools_replayed",
    "resources",
    "prediction_records",
    "instruction_key",
    "task_input",
    "closed_answer",
    "demonstration",
    "system_defaults",
)


class QuestionPrompting(TaskPrompting):
    def build_prompt(self, example: Example, docs: Any = None, **options: Any) -> str:
        return example.question


class Plain(Task):
    name = "protocols_plain"
    metrics = ("em",)
    gold_fields = ("answers",)
    prompting = QuestionPrompting()

    def examples(self) -> Iterator[Example]:
        yield Example(id="q1", question="Capital of France?", gold={"answers": ["Paris"]})


class WithTools(Plain):
    """Uses tools and the run's resources: has `bind`, `setup` and `teardown` (no base class needed)."""

    name = "protocols_tools"
    events: list[str] = []

    def bind(self, resources: Any) -> None:
        self.events.append("bind")
        self.bound = resources

    async def setup(self) -> dict[str, Any]:
        self.events.append("setup")
        return {"capitals": {"Capital of France?": "Paris"}}

    async def teardown(self) -> None:
        self.events.append("teardown")


class ToolReader(System):
    """Answers from the task's tool when there is one; says whether the run lent it its resources."""

    name = "protocols_tool_reader"
    uses_llm = False

    async def run(self, example: Example, ctx: Any) -> Prediction:
        table = ctx.tools.get("capitals", {})
        return Prediction(
            example.id, answer=table.get(example.question, "unknown"), extras={"resources": ctx.resources is not None}
        )


def test_task_has_no_member_that_serves_one_benchmark():
    assert [name for name in BENCHMARK_MEMBERS if hasattr(Task, name)] == []


def test_a_plain_task_runs_without_tools_and_its_system_still_gets_the_runs_resources():
    result = run_eval(Plain, ToolReader, metrics=["em"])
    sample = result.samples["protocols_plain"][0]
    assert sample.answer == "unknown" and sample.extras["resources"] is True
    assert not isinstance(Plain(), UsesTools) and not isinstance(Plain(), UsesRunResources)


def test_a_task_that_uses_tools_is_bound_set_up_and_torn_down():
    WithTools.events = []
    result = run_eval(WithTools, ToolReader, metrics=["em"])
    sample = result.samples["protocols_tools"][0]
    assert sample.answer == "Paris" and sample.scores["em"] == 1.0 and sample.extras["resources"] is True
    assert WithTools.events == ["bind", "setup", "teardown"]
    assert isinstance(WithTools(), UsesTools) and isinstance(WithTools(), UsesRunResources)


class LabelPrompting(QuestionPrompting):
    answer_format = "label"


class Instructed(Plain):
    name = "protocols_instructed"
    prompting = LabelPrompting()
    instruction_key = "fever"

    def task_input(self, example: Example) -> str:
        return "claim: " + example.question

    def demonstration(self) -> tuple[str, str]:
        return ("Is the sky blue?", "true")


def test_systems_read_the_protocols_of_any_task():
    example = Example(id="q1", question="The sky is green.")
    plain, instructed = Plain(), Instructed()
    assert isinstance(instructed, StandingInstruction) and not isinstance(plain, StandingInstruction)
    assert (task_input(plain, example), instruction_key(plain), task_demonstration(plain)) == (
        "The sky is green.",
        None,
        None,
    )
    assert (task_input(instructed, example), instruction_key(instructed), task_demonstration(instructed)) == (
        "claim: The sky is green.",
        "fever",
        ("Is the sky blue?", "true"),
    )
    assert closed_answer(instructed) and not closed_answer(plain)


def test_task_is_a_composition_of_at_most_twenty_public_names():
    public = [name for name in dir(Task) if not name.startswith("_")]
    assert len(public) <= 20, public
    assert "scoring" in public and "prompting" in public


PROMPTING_HOOKS = (
    "build_prompt",
    "answer_prompt",
    "reader_prompt",
    "postprocess",
    "chat_messages",
    "citations",
    "passages",
    "query_text",
    "answer_format",
    "cites",
)


def test_the_prompting_hooks_are_members_of_the_prompting_object_a_task_provides_not_of_task():
    from ragbench import api

    assert [name for name in PROMPTING_HOOKS if hasattr(Task, name)] == []
    assert isinstance(Task.prompting, api.TaskPrompting) and isinstance(Plain().prompting, api.TaskPrompting)
    assert [name for name in PROMPTING_HOOKS if not hasattr(api.TaskPrompting, name)] == []
    for hook in PROMPTING_HOOKS:  # a task that still defines or sets one on itself is refused, not silently ignored
        with pytest.raises(TypeError, match=f"Old defines {hook}: a task's prompting is its `prompting` object"):
            type("Old", (Task,), {hook: None})
        with pytest.raises(TypeError, match=f"Plain defines {hook}: a task's prompting"):
            setattr(Plain(), hook, None)


def test_scoring_declared_by_name_on_a_class_or_an_instance_is_the_tasks_scoring():
    class Declared(Task):
        name = "declared"
        metrics = ("em",)
        slice_fields = ("region",)
        gold_fields = ("answers",)

    class Child(Declared):
        missing_scores_zero = True

    child = Child()
    child.metrics = ("em", "f1")
    assert (Declared.scoring.metrics, Declared.scoring.slice_fields, Declared.scoring.gold_fields) == (
        ("em",),
        ("region",),
        ("answers",),
    )
    assert Child.scoring.missing_scores_zero and Child.scoring.slice_fields == ("region",)
    assert child.scoring.metrics == ("em", "f1") and Child.scoring.metrics == ("em",)
    assert not hasattr(Declared, "metrics") and not hasattr(child, "metrics")


names = st.lists(st.text(st.characters(min_codepoint=48, max_codepoint=122), min_size=1, max_size=8), max_size=4)
slice_names = st.lists(st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,7}", fullmatch=True), max_size=4)  # they name files


@settings(max_examples=40)
@given(
    on_class=st.fixed_dictionaries(
        {},
        optional={
            "metrics": names,
            "slice_fields": slice_names,
            "gold_fields": names,
            "missing_scores_zero": st.booleans(),
        },
    ),
    on_instance=st.fixed_dictionaries(
        {},
        optional={
            "metrics": names,
            "missing_scores_zero": st.booleans(),
            "metric_options": st.dictionaries(
                st.sampled_from(["em", "f1"]),
                st.dictionaries(st.sampled_from(["k", "strip"]), st.integers()),
                max_size=2,
            ),
        },
    ),
)
def test_scoring_is_what_the_class_and_then_the_instance_declare(on_class, on_instance):
    declared = type("Declared", (Task,), {"name": "declared", **on_class})
    task = declared()
    for name, value in on_instance.items():
        setattr(task, name, value)
    expected = {**on_class, **on_instance}
    scoring = task.scoring
    assert scoring.metrics == tuple(expected.get("metrics", ()))
    assert scoring.slice_fields == tuple(expected.get("slice_fields", ()))
    assert scoring.gold_fields == (tuple(expected["gold_fields"]) if "gold_fields" in expected else None)
    assert scoring.missing_scores_zero == expected.get("missing_scores_zero", False)
    assert scoring.metric_options == expected.get("metric_options", {})
    assert declared.scoring == Task.scoring.__class__(**on_class) and declared().scoring == declared.scoring


def test_a_yaml_task_that_names_a_standing_instruction_implements_the_protocol(tmp_path):
    from ragbench._shared.yaml_tasks import task_class
    from ragbench._shared.yaml_tasks.spec import load_spec

    (tmp_path / "d.jsonl").write_text('{"id": "1", "question": "The sky is green.", "label": "false"}\n')
    for declared, key in (("instruction_key: fever\n", "fever"), ("", None)):
        (tmp_path / "t.yaml").write_text(
            f"task: t\ndata: {{path: d.jsonl}}\nanswer_format: label\n{declared}"
            "fields: {gold: {label: label}}\nprompt:\n  template: '{{ question }}'\n"
            "metrics: [em]\n"
        )
        task = task_class(load_spec(tmp_path / "t.yaml"))()
        (example,) = task.examples()
        assert (instruction_key(task), task_input(task, example)) == (key, "The sky is green.")
        assert isinstance(task, StandingInstruction) == (key is not None)

"""What one benchmark needs is an optional protocol its task implements, not a member of every task: a
plain task runs without any, and the run lends its resources, starts the tools and stops them only for
a task that uses tools."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ragbench.api import Example, Prediction, System, SystemDeclaration, Task, TaskPrompting, TaskScoring
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
    scoring = TaskScoring(metrics=("em",), gold_fields=("answers",))
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
    declares = SystemDeclaration(uses_llm=False)

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


def test_a_yaml_task_that_names_a_standing_instruction_implements_the_protocol(tmp_path):
    from ragbench.api.yaml_tasks import yaml_task_class

    (tmp_path / "d.jsonl").write_text('{"id": "1", "question": "The sky is green.", "label": "false"}\n')
    for declared, key in (("instruction_key: fever\n", "fever"), ("", None)):
        (tmp_path / "t.yaml").write_text(
            f"task: t\ndata: {{path: d.jsonl}}\nanswer_format: label\n{declared}"
            "fields: {gold: {label: label}}\nprompt:\n  template: '{{ question }}'\n"
            "metrics: [em]\n"
        )
        task = yaml_task_class(tmp_path / "t.yaml")()
        (example,) = task.examples()
        assert (instruction_key(task), task_input(task, example)) == (key, "The sky is green.")
        assert isinstance(task, StandingInstruction) == (key is not None)

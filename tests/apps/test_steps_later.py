"""`Context.steps_later`: the steps a system leaves to make end its example's trace, made in a run once the system has
returned (an application's spans read as steps after its next example was asked), at once outside a run; a maker
that raises fails its example, its traceback kept, as a system that raises does."""

from __future__ import annotations

import json

from conftest import write_jsonl
from ragbench.api import Prediction, Step, System, SystemDeclaration
from ragbench.testing import make_context, run_eval


def _steps(name: str) -> list[Step]:
    return [Step(kind="custom", name=name, request={}), Step(kind="custom", name=f"{name} again", request={})]


class LeavesSteps(System):
    """A system that calls no model of the run (its examples are scored while its next is asked) and leaves the last
    steps of its trace to make; `broken`: the maker raises."""

    name = "leaves_steps"
    declares = SystemDeclaration(uses_llm=False)
    broken = False

    async def run(self, example, ctx):
        with ctx.step("retrieval", "own", {"query": example.question}):
            pass
        ctx.steps_later(lambda: [][0] if self.broken else _steps("made later"))
        return Prediction(example.id, answer="A")


class BreaksLater(LeavesSteps):
    name = "breaks_later"
    broken = True


class RaisesAfter(LeavesSteps):
    """Leaves its last steps to make, then raises: its example fails, with those steps in its trace."""

    name = "raises_after"

    async def run(self, example, ctx):
        await super().run(example, ctx)
        raise RuntimeError("after the steps")


def _run(tmp_path, system: type[System]) -> list[dict]:
    data = write_jsonl(
        tmp_path / "q.jsonl", [{"id": f"e{i}", "question": "Q?", "answers": ["A"], "ctxs": []} for i in range(3)]
    )
    run_eval("demo", system, metrics=["em"], data=data, output=tmp_path / "run", bootstrap_iters=0, progress=False)
    return [json.loads(line) for line in (tmp_path / "run" / "samples" / "demo.jsonl").read_text().splitlines()]


def test_the_steps_left_to_make_end_the_trace_of_every_sample(tmp_path):
    for record in _run(tmp_path, LeavesSteps):
        assert [step["name"] for step in record["trace"]] == ["own", "made later", "made later again"]
        assert record["error"] is None and record["scores"] == {"em": 1.0}


def test_a_maker_that_raises_fails_its_example_with_its_traceback(tmp_path):
    for record in _run(tmp_path, BreaksLater):
        assert record["error"] == "IndexError: list index out of range"
        assert "IndexError" in record["traceback"]
        assert [step["name"] for step in record["trace"]] == ["own"]


def test_a_system_that_raises_after_leaving_steps_keeps_them_in_its_failed_examples_trace(tmp_path):
    for record in _run(tmp_path, RaisesAfter):
        assert record["error"] == "RuntimeError: after the steps"
        assert [step["name"] for step in record["trace"]] == ["own", "made later", "made later again"]


async def test_outside_a_run_the_steps_are_made_at_once():
    ctx = make_context("demo")
    ctx.steps_later(lambda: _steps("now"))
    assert [step.name for step in ctx.trace] == ["now", "now again"]
    assert ctx.settle_trace() is ctx.trace and len(ctx.trace) == 2

"""The structure hook: `ctx.group` / `@grouped` tag the steps made inside (across asyncio.gather),
`outline` builds the tree the viewer draws (a system without a `trace_outline` of its own gets it:
tests/api/test_plugin_contract.py)."""

from __future__ import annotations

import asyncio

from ragbench.api import Step
from ragbench.api.trace import find_groups, group, grouped, outline


def test_steps_record_their_groups_across_tasks_and_nesting():
    trace: list[Step] = []

    async def call(name: str) -> None:
        await asyncio.sleep(0)
        trace.append(Step("llm", name, {}))

    @grouped("agent")
    async def agent() -> None:
        await call("inside agent")

    async def main() -> None:
        with group("iteration 1"):
            await asyncio.gather(call("a"), call("b"))
            with group("verify"):
                await call("c")
        await agent()
        await call("answer")

    asyncio.run(main())
    assert [(s.name, s.group) for s in trace] == [
        ("a", ["iteration 1"]),
        ("b", ["iteration 1"]),
        ("c", ["iteration 1", "verify"]),
        ("inside agent", ["agent"]),
        ("answer", []),
    ]
    assert "group" not in trace[-1].to_dict() and trace[2].to_dict()["group"] == ["iteration 1", "verify"]


def test_outline_nests_and_merges_consecutive_steps_of_a_group():
    trace = [Step("llm", "s", {}, group=labels) for labels in (["it 1"], ["it 1", "verify"], ["it 2"], [], ["it 2"])]
    assert outline(trace) == [
        {"group": "it 1", "items": [{"step": 0}, {"group": "verify", "items": [{"step": 1}]}]},
        {"group": "it 2", "items": [{"step": 2}]},
        {"step": 3},
        {"group": "it 2", "items": [{"step": 4}]},
    ]
    assert [node["items"] for node in find_groups(outline(trace), "verify")] == [[{"step": 1}]]

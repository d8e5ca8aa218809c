"""A system's options merge from their sources in one declared order (ragbench._run.plan.system_options.SOURCES), and
docs/running.md's table of the sources is that order."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ragbench._run.plan.system_options import SOURCES, system_options
from ragbench.api import System, SystemDeclaration
from support import paths

RUNNING = paths.REPO / "docs" / "running.md"


class Budgeted(System):
    name = "budgeted"
    declares = SystemDeclaration(budget_options={"passages": "top_n"}, own_defaults=("max_tokens",))

    def __init__(self, top_n: int = 1, temperature: float = 0.0, max_tokens: int = 100) -> None:
        self.options = {"top_n": top_n, "temperature": temperature, "max_tokens": max_tokens}

    async def answer(self, example: Any, ctx: Any) -> Any:  # never called: only built
        raise NotImplementedError


def test_the_docs_table_lists_the_sources_in_the_codes_order():
    rows = [f"| {order} | {s.given_by} | {s.reaches} |" for order, s in enumerate(SOURCES, 1)]
    text = RUNNING.read_text(encoding="utf-8")
    table = "| order | source | sets |\n|---|---|---|\n" + "\n".join(rows) + "\n"
    assert table in text, "docs/running.md's table of a system's option sources differs from SOURCES"


LAYERS = ("declared", "task_defaults", "system_args")


@given(
    st.sets(st.sampled_from(LAYERS)),
    st.dictionaries(st.sampled_from(["nope", "max_tokens"]), st.integers(0, 9), max_size=2),
)
def test_the_last_source_that_sets_an_option_wins(setting: set[str], task_only: dict[str, int]):
    """`temperature` set by any subset of the sources takes the last one's value; the task's options the system
    does not take, or keeps its own default for, never reach it (`--system-arg` still sets its own ones)."""
    values = {layer: {"temperature": float(i + 1)} if layer in setting else {} for i, layer in enumerate(LAYERS)}
    merged = system_options(
        Budgeted,
        {**task_only, **values["declared"]},
        {**task_only, **values["task_defaults"]},
        None,
        values["system_args"],
    )
    last = [values[layer]["temperature"] for layer in LAYERS if layer in setting]
    assert merged == ({"temperature": last[-1]} if last else {})
    assert system_options(Budgeted, task_only, {}, None, {"max_tokens": 7}) == {"max_tokens": 7}


def test_top_k_is_over_the_tasks_and_under_nothing_the_system_arg_disagrees_with():
    assert system_options(Budgeted, {"top_n": 2}, {"top_n": 4}, 3, {}) == {"top_n": 3}
    assert system_options(Budgeted, {"top_n": 2}, {}, 3, {"top_n": 3, "temperature": 0.5}) == {
        "top_n": 3,
        "temperature": 0.5,
    }

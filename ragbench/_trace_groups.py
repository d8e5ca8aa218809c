"""How a system tells the viewer (and anyone reading a sample's trace) the structure of its steps.

A system wraps a stage of its algorithm in `with ctx.group("iteration 2"):`; every step made inside
(LLM calls, retrievals, tool calls, in this task or in tasks it starts with asyncio.gather) records
the labels of the groups it was made in, outermost first, as `step.group` (["iteration 2"]). Groups
nest. `outline(trace)` turns a recorded trace into that tree; `System.trace_outline` may decorate it
with what only the system knows (e.g. Self-RAG's per-passage scores and the chosen passage).

An outline is a list of items, each either {"step": i} (index into the trace) or
{"group": label, "items": [...], "info": {...}, "chosen": bool} (info and chosen optional).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_PATH: ContextVar[tuple[str, ...]] = ContextVar("ragbench_trace_group", default=())


def current_group() -> list[str]:
    """The labels of the groups the calling code runs in, outermost first."""
    return list(_PATH.get())


@contextmanager
def group(label: str) -> Iterator[None]:
    """Steps made inside belong to the group `label` (nested in the enclosing groups)."""
    token = _PATH.set((*_PATH.get(), str(label)))
    try:
        yield
    finally:
        _PATH.reset(token)


def outline(trace: list[Any]) -> list[dict[str, Any]]:
    """The tree of a trace (its ragbench._types.Step objects) by the steps' `group` labels; consecutive
    steps of the same group share one node (a group made again later, after other steps, gets a node
    of its own)."""
    root: list[dict[str, Any]] = []
    open_path: list[dict[str, Any]] = []  # the group nodes the previous step sat in
    for index, step in enumerate(trace):
        path = [str(label) for label in step.group or []]
        depth = 0
        while depth < min(len(path), len(open_path)) and open_path[depth]["group"] == path[depth]:
            depth += 1
        open_path = open_path[:depth]
        for label in path[depth:]:
            node = {"group": label, "items": []}
            (open_path[-1]["items"] if open_path else root).append(node)
            open_path.append(node)
        (open_path[-1]["items"] if open_path else root).append({"step": index})
    return root


def find_groups(items: list[dict[str, Any]], label: str) -> Iterator[dict[str, Any]]:
    """Every group node named `label`, depth first."""
    for item in items:
        if "group" in item:
            if item["group"] == label:
                yield item
            yield from find_groups(item["items"], label)


def grouped(label: str) -> Callable[[F], F]:
    """Decorator: every step an async method makes belongs to the group `label`
    (`@grouped("Fact Locator") async def locate(...)`)."""

    def wrap(method: F) -> F:
        @functools.wraps(method)
        async def run(*args: Any, **kwargs: Any) -> Any:
            with group(label):
                return await method(*args, **kwargs)

        return run  # type: ignore[return-value]

    return wrap

"""Reading ReaRAG's `Thought N:` / `Action N:` output as FlashRAG's `AgentUtils` does (flashrag/pipeline/
ReaRAG_utils.py:20-145 at commit 1ee5249), except that the action is read with `ast.literal_eval` where
FlashRAG runs Python's `eval` on the model's text: a dict literal reads the same, anything that is not a
literal (a call, a name) is unreadable instead of executed."""

from __future__ import annotations

import ast
import re
from typing import TypedDict, cast

STEP_LABEL = re.compile(r"^(Thought|Action|Observation)\s+(\d+):", re.MULTILINE)


def extract_code(text: str) -> str:
    """The text inside the first ``` block (after its first line), else inside the first `...`, else all."""
    triple = re.search(r"```[^\n]*\n(.+?)```", text, re.DOTALL)
    if triple:
        return triple.group(1)
    single = re.search(r"`([^`]*)`", text, re.DOTALL)
    return single.group(1) if single else text


def reasoning_steps(text: str) -> list[tuple[str, dict[str, str | None]]]:
    """The labelled parts of each step number, in step-number order (`parse_reasoning_steps`): a label's text
    runs to the next label, stripped; an action keeps only its code."""
    steps: dict[str, dict[str, str | None]] = {}
    matches = list(STEP_LABEL.finditer(text))
    for match, following in zip(matches, matches[1:] + [None]):
        label, number = match.group(1), match.group(2)
        part = steps.setdefault(number, {"Thought": None, "Action": None, "Observation": None})
        part[label] = text[match.end() : following.start() if following else len(text)].strip()
    for part in steps.values():
        if part["Action"]:
            part["Action"] = extract_code(part["Action"])
    return sorted(steps.items(), key=lambda item: int(item[0]))


class Action(TypedDict):
    """One step's action, a dict literal as the model wrote it: the function it calls and its parameters."""

    function: object
    parameters: dict[object, object]


def read_action(code: str | None) -> Action | None:
    """One action's dict, or None where it is no dict literal with "function" and "parameters"."""
    if code is None:
        return None
    try:
        action = ast.literal_eval(extract_code(code))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(action, dict) or "function" not in action or not isinstance(action.get("parameters"), dict):
        return None
    return cast("Action", action)


def first_action(text: str) -> Action | None:
    """The first step's action; None where FlashRAG's reading fails (no step, or any step without a readable
    action: `postprocess_agent_response` reads them all), which restarts the example."""
    actions = [read_action(part["Action"]) for _, part in reasoning_steps(text)]
    if not actions or any(action is None for action in actions):
        return None
    return actions[0]


def next_move(action: Action | None) -> tuple[str, str]:
    """What the loop does with an action: ("finish", its answer as text), ("search", its query) or ("restart", "")
    for no action, another function, or a missing parameter (FlashRAG crashes there) or a query that is not
    text."""
    if action is not None:
        parameters = action["parameters"]
        if action["function"] == "finish" and "answer" in parameters:
            return "finish", str(parameters["answer"])
        query = parameters.get("query")
        if action["function"] == "search" and isinstance(query, str):
            return "search", query
    return "restart", ""

"""nuggetizer 0.0.5's `Nuggetizer.create` and `assign` (models/nuggetizer.py) over a ragbench judge per role.

Each call sends the step's messages at temperature 0.0 with `max_completion_tokens` 2,048, no top_p, n or seed
(nuggetizer's body, field for field);
the reply, its "```python" and "```" removed and stripped, is read by `ast.literal_eval`, and whatever fails
(reading, slicing, a label that is no string) asks again at temperature 0.2, up to 500 calls per window, as
nuggetizer's `except Exception` does. A label list is zipped with the window's nuggets (a short list drops the
rest, a long one's extra labels are ignored), and labels read before a failing one stay (nuggetizer appends as it
goes). For a model whose name holds "o1" the system message is joined into the user message, and nuggetizer
joins it into its own message dict at every call, so the k-th call of a window holds it k times; temperature 1.0.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import prompts

TRIALS = 500  # nuggetizer's trial_count per window
ASSIGN_WINDOW = 10  # Nuggetizer's assigner_window_size, which assign_nuggets.py leaves at its default
MAX_TOKENS = 2048  # nuggetizer's max_completion_tokens


@dataclass
class Nugget:
    text: Any  # what the creator's list held (nuggetizer keeps it unchecked)
    importance: Any = ""  # a label as the judge wrote it, lowered (nuggetizer keeps any)
    assignment: Any = ""


def read(reply: str) -> Any:
    """A reply as nuggetizer reads it: code fence marks removed, stripped, then `ast.literal_eval`."""
    return ast.literal_eval(reply.replace("```python", "").replace("```", "").strip())


class Steps:
    """One topic's nugget creation and scoring in windows of `window`, assignment in windows of `assign_window`;
    `count(name)` is told each unparsed reply and each window given up."""

    def __init__(
        self,
        judges: list[Any],
        count: Callable[[str], None],
        window: int,
        max_nuggets: int,
        assign_window: int = ASSIGN_WINDOW,
    ) -> None:
        self.creator, self.scorer, self.assigner = judges
        self.count, self.window, self.max_nuggets = count, window, max_nuggets
        self.assign_window = assign_window

    async def ask(self, judge: Any, messages: list[dict[str, str]], use: Callable[[Any], None]) -> bool:
        """Ask until `use(read(reply))` returns without raising: True, or False after TRIALS calls."""
        o1 = "o1" in judge.engine.model
        temperature, user = 0.0, messages[-1]["content"]
        for _ in range(TRIALS):
            sent = messages
            if o1:  # nuggetizer's LLMHandler.run, which rewrites the window's user message in place
                user = messages[0]["content"] + "\n" + user
                sent = [{**messages[1], "content": user}]
            reply = await judge.chat(
                sent,
                step="judge:nuggetizer",
                temperature=1.0 if o1 else temperature,
                max_tokens=MAX_TOKENS,
                max_tokens_as="max_completion_tokens",
                left_to_server=("top_p", "n", "seed"),  # nuggetizer's client sends none of them
            )
            try:
                use(read(reply.text))
                return True
            except Exception:
                self.count("nuggetizer_unparsed")
                temperature = 0.2
        self.count("nuggetizer_gave_up")
        return False

    async def create(self, query: str, passages: list[str]) -> list[Nugget]:
        """`Nuggetizer.create`: the nugget list updated window by window, then labelled vital or okay in windows,
        vital ones first (stable, by first position), at most max_nuggets."""
        current: Any = []
        for start in range(0, len(passages), self.window):

            def update(parsed: Any) -> None:
                nonlocal current
                current = parsed[: self.max_nuggets]

            window = passages[start : start + self.window]
            await self.ask(self.creator, prompts.create(query, window, current, self.max_nuggets), update)
        nuggets = [Nugget(text) for text in current]
        scored: list[Nugget] = []
        for start in range(0, len(nuggets), self.window):
            batch = nuggets[start : start + self.window]

            def label(parsed: Any, batch: list[Nugget] = batch) -> None:
                for nugget, importance in zip(batch, parsed):
                    scored.append(Nugget(nugget.text, importance.lower()))

            if not await self.ask(self.scorer, prompts.score(query, [n.text for n in batch]), label):
                scored.extend(Nugget(n.text, "failed") for n in batch)
        key = [(0 if n.importance == "vital" else 1, first(scored, n)) for n in scored]
        ranked = [scored[i] for i in sorted(range(len(scored)), key=key.__getitem__)]
        return ranked[: self.max_nuggets]

    async def assign(self, query: str, answer: str, nuggets: list[Nugget], grades: int) -> list[Nugget]:
        """`Nuggetizer.assign`: each window of nuggets labelled against the answer; an empty answer supports
        nothing (no call)."""
        if answer.strip() == "":
            return [Nugget(n.text, n.importance, "not_support") for n in nuggets]
        assigned: list[Nugget] = []
        for start in range(0, len(nuggets), self.assign_window):
            batch = nuggets[start : start + self.assign_window]

            def label(parsed: Any, batch: list[Nugget] = batch) -> None:
                for nugget, assignment in zip(batch, parsed):
                    assigned.append(Nugget(nugget.text, nugget.importance, assignment.lower()))

            messages = prompts.assign(query, answer, [n.text for n in batch], grades)
            if not await self.ask(self.assigner, messages, label):
                assigned.extend(Nugget(n.text, n.importance, "failed") for n in batch)
        return assigned


def first(nuggets: list[Nugget], nugget: Nugget) -> int:
    """`list.index` of nuggetizer's dataclasses: the position of the first nugget equal in text and importance."""
    return next(i for i, n in enumerate(nuggets) if (n.text, n.importance) == (nugget.text, nugget.importance))


def scores(nuggets: list[Nugget]) -> dict[str, float]:
    """nuggetizer's `calculate_nugget_scores`: the share of (vital / all) nuggets supported, "strict" counting
    support only, the others partial_support as 0.5; 0.0 where there are no (vital) nuggets."""
    vital = [n for n in nuggets if n.importance == "vital"]

    def share(group: list[Nugget], partial: float) -> float:
        got = sum(
            1.0 if n.assignment == "support" else partial if n.assignment == "partial_support" else 0.0 for n in group
        )
        return got / len(group) if group else 0.0

    return {
        "strict_vital_score": share(vital, 0.0),
        "strict_all_score": share(nuggets, 0.0),
        "vital_score": share(vital, 0.5),
        "all_score": share(nuggets, 0.5),
    }

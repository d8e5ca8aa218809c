"""Every example's ceiling: the steps a system (or a metric) may take on one example, and the characters of the
prompts it may send, before the example ends as a counted failure (`CeilingReached: ...`) while the run goes on.

A system that loops until its model says it is done (search_r1_own's default, as Search-R1's own script) never ends
with a model that never says so; each round's prompt is longer than the last, and the example's trace keeps every
prompt, so its memory grows with the square of its rounds. The ceiling is counted where every step enters the
example's trace (ragbench._llm.LLM.send, ragbench._context.Context.step and record_step; a search is a
`Context.step`): the steps bound the trace's length, the characters its prompts, and so the memory an example
holds. The defaults are far above what any built-in system takes at its own bounds (docs/running.md, "Every
example's ceiling"); `--max-steps-per-example` and `--max-prompt-chars-per-example` set them for a run.

`CeilingReached` derives from BaseException, so that the `except Exception` a system folds a failed call into its
result with does not swallow it; once reached, every later step of the example is refused too, and the example
fails whatever the system returns."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

MAX_STEPS = 10_000  # steps of one example: model calls, searches, tool calls and recorded steps
# characters of the prompts one example sends, summed over its model calls: below a sample's 64 MiB of JSON
# (ragbench._values.json_values.MAX_BYTES), since its trace keeps every prompt, so that an example stopped here is
# still written with its steps
MAX_PROMPT_CHARS = 40_000_000


@dataclass(frozen=True)
class Ceiling:
    """The most steps and prompt characters one example may take."""

    steps: int = MAX_STEPS
    prompt_chars: int = MAX_PROMPT_CHARS

    @classmethod
    def of(cls, steps: int | None, prompt_chars: int | None) -> Ceiling:
        """The ceiling a run's options give (None: the default)."""
        return cls(MAX_STEPS if steps is None else steps, MAX_PROMPT_CHARS if prompt_chars is None else prompt_chars)


class CeilingReached(BaseException):
    """An example's step or prompt that its ceiling refuses (a BaseException: see the module's docstring)."""


@dataclass(frozen=True)
class CeilingCount:
    """What one example has taken against its ceiling so far."""

    steps: int = 0
    prompt_chars: int = 0  # of the prompts sent
    reached: str | None = None  # what was reached, in a line, once it was


class ExampleCeiling:
    """One example's count against its `Ceiling`, for one plugin (`owner`: "system vanilla", "metric judge").

    Read-only to the plugin it bounds (`ctx.ceiling`): its `count` goes up only through `take_step`, and setting or
    deleting any of its attributes raises AttributeError."""

    __slots__ = ("ceiling", "owner", "_count")
    ceiling: Ceiling
    owner: str
    _count: CeilingCount

    def __init__(self, ceiling: Ceiling, owner: str) -> None:
        for name, value in (("ceiling", ceiling), ("owner", owner), ("_count", CeilingCount())):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{UNBOUNDABLE}: its count cannot be set (ExampleCeiling.{name})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{UNBOUNDABLE}: its count cannot be deleted (ExampleCeiling.{name})")

    @property
    def count(self) -> CeilingCount:
        return self._count

    def take_step(self, prompt_chars: int = 0) -> None:
        """Count one step (sending `prompt_chars` characters of prompt), or raise `CeilingReached` where it would
        go past the ceiling, or the ceiling was reached before."""
        count = self._count
        if count.reached is None:
            if count.steps >= self.ceiling.steps:
                count = replace(
                    count,
                    reached=f"{self.owner} did not end within {self.ceiling.steps:,} steps on this example (model "
                    "calls, searches, tool and recorded steps): a loop? --max-steps-per-example N lifts the ceiling",
                )
            elif count.prompt_chars + prompt_chars > self.ceiling.prompt_chars:
                count = replace(
                    count,
                    reached=f"{self.owner} did not end within {self.ceiling.prompt_chars:,} characters of prompts "
                    "on this example: a loop whose prompt grows? --max-prompt-chars-per-example N lifts the ceiling",
                )
        if count.reached is None:
            count = replace(count, steps=count.steps + 1, prompt_chars=count.prompt_chars + prompt_chars)
        object.__setattr__(self, "_count", count)
        if count.reached is not None:
            raise CeilingReached(count.reached)

    @property
    def error(self) -> str | None:
        """The example's failure once the ceiling was reached (`CeilingReached: ...`), else None."""
        reached = self._count.reached
        return None if reached is None else f"{CeilingReached.__name__}: {reached}"


KEPT = frozenset({"ceiling", "ctx"})  # a holder's attributes `keep_ceiling` keeps
UNBOUNDABLE = "an example's ceiling is the run's (--max-steps-per-example, --max-prompt-chars-per-example)"


def keep_ceiling(holder: object, name: str) -> None:
    """Refuse (AttributeError) to set or delete `name` of `holder` (an LLM handle, a context, a bound retrieval)
    where it is the attribute `ceiling` or `ctx` and was given when `holder` was made: a plugin that replaces it
    (`ctx.llm.ceiling = None`) would take its steps out of its example's count."""
    if name in KEPT and name in vars(holder):
        raise AttributeError(f"{UNBOUNDABLE}: {type(holder).__name__}.{name} cannot be replaced or deleted")


class CeilingHeld:
    """A holder (an LLM handle, a context, a bound retrieval) whose `ceiling` or `ctx`, given when it was made,
    cannot be replaced or deleted (`keep_ceiling`)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in KEPT:  # most attributes set (a context's, as it is made) are neither: no call
            keep_ceiling(self, name)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        keep_ceiling(self, name)
        super().__delattr__(name)

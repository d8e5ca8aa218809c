"""Base class of system plugins: one example at a time, as async code that reads like the paper."""
from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from .context import Context
    from .types import Example, Prediction


class System:
    """Subclasses take their options as keyword arguments of `__init__` (from `--system-arg`)."""

    name: ClassVar[str] = ""

    async def run(self, example: "Example", ctx: "Context") -> "Prediction":
        raise NotImplementedError

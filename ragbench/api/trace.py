"""The structure of a trace: the groups a system marks its steps with, and reading them back.

    from ragbench.api.trace import group, outline

`group` and `grouped` (mark the steps of one part of an algorithm: an iteration, a branch), `outline`
and `find_groups` (read those groups back from a trace), `trace_prompts` (the prompt or chat messages of
each LLM call of a trace, in call order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragbench.api._lazy import lazy_names

if TYPE_CHECKING:  # type checkers read each name where it is defined; it is imported on first use (below)
    from ragbench._trace_groups import find_groups, group, grouped, outline
    from ragbench._types import trace_prompts

_MODULES = {
    "ragbench._trace_groups": ("group", "grouped", "outline", "find_groups"),
    "ragbench._types": ("trace_prompts",),
}
__all__, __getattr__, __dir__ = lazy_names(__name__, _MODULES)

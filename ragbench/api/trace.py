"""The structure of a trace: the groups a system marks its steps with, and reading them back.

    from ragbench.api.trace import group, outline

`group` and `grouped` (mark the steps of one part of an algorithm: an iteration, a branch), `outline`
and `find_groups` (read those groups back from a trace), `trace_prompts` (the prompt or chat messages of
each LLM call of a trace, in call order).
"""

from __future__ import annotations

from ragbench.api._lazy import lazy_names

_MODULES = {
    "ragbench._trace_groups": ("group", "grouped", "outline", "find_groups"),
    "ragbench._types": ("trace_prompts",),
}
__all__, __getattr__, __dir__ = lazy_names(__name__, _MODULES)

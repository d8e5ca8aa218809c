"""How much of the machine and the budget a run may take, and what it does with a failure: examples at once, each
example's ceilings, the dollars it may spend, stopping at the first failure, failing an example on a failed call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ...._values.ceiling import MAX_PROMPT_CHARS, MAX_STEPS
from ...._values.option_bounds import MAX_INFLIGHT
from ...._values.run_groups import RunLimits
from .option import Option, OptionGroup


class LimitOptions(OptionGroup):
    TITLE: ClassVar[str] = "Speed, limits and failures"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option(
            ("--max-inflight",),
            ("max_inflight",),
            {
                "default": None,
                "type": int,
                "help": f"examples running at once, at most {MAX_INFLIGHT:,} (default: the model engine's batch size "
                "or concurrency, at least 64 and at most 256)",
            },
        ),
        Option(
            ("--max-steps-per-example",),
            ("max_steps_per_example",),
            {
                "default": None,
                "type": int,
                "metavar": "N",
                "help": f"each example's ceiling of steps (model calls, searches, tool and recorded steps; default "
                f"{MAX_STEPS:,}): an example that reaches it fails as CeilingReached and the run goes on",
            },
        ),
        Option(
            ("--max-prompt-chars-per-example",),
            ("max_prompt_chars_per_example",),
            {
                "default": None,
                "type": int,
                "metavar": "N",
                "help": f"each example's ceiling of characters of prompts sent, summed over its model calls (default "
                f"{MAX_PROMPT_CHARS:,}): an example that reaches it fails as CeilingReached",
            },
        ),
        Option(
            ("--max-cost",),
            ("max_cost",),
            {
                "default": None,
                "type": float,
                "metavar": "DOLLARS",
                "help": "stop the run before its LLM calls (system model and judges, priced as results.json prices "
                "them) would cost more than this, each batch checked at its worst first; --resume continues",
            },
        ),
        Option(
            ("--fail-fast",),
            ("fail_fast",),
            {
                "is_flag": True,
                "help": "stop at the first failed example or bad record and print its traceback (for developing a "
                "plugin; --resume continues the run)",
            },
        ),
        Option(
            ("--strict-infra",),
            ("strict_infra",),
            {
                "is_flag": True,
                "help": "fail an example when a judge/tool/retrieval call failed and was folded into its result "
                "(upstream's behaviour, counted, is the default)",
            },
        ),
    )

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> RunLimits:
        return RunLimits(
            max_inflight=values.get("max_inflight"),
            max_steps_per_example=values.get("max_steps_per_example"),
            max_prompt_chars_per_example=values.get("max_prompt_chars_per_example"),
            max_cost=values.get("max_cost"),
            fail_fast=values.get("fail_fast", False),
            strict_infra=values.get("strict_infra", False),
        )

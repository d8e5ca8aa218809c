"""How much of the machine and the budget a run may take, and what it does with a failure (`RunLimits`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._values.ceiling import MAX_PROMPT_CHARS, MAX_STEPS
from .option_bounds import MAX_INFLIGHT, number_problem, too_many
from .run_option import SCORED, found, option

DEFAULT_INFLIGHT = 64
MAX_DEFAULT_INFLIGHT = 256


def examples_in_flight(given: int | None, engine: Any = None) -> int:
    """`--max-inflight`, or by default enough examples for the model engine to fill one batch (or use
    its concurrency) when each has one call waiting: a closed-book run of 64 in flight fed an `hf` engine
    whose `batch_size=auto` is 256 batches of 64, a fraction of the tokens per second of full batches (docs/
    performance.md, "Figures behind the code"). At least 64; at most 256, since each example in flight holds
    its data (a CRAG Task 3 example: 50 web pages)."""
    if given is not None:
        return given
    if engine is None:
        return DEFAULT_INFLIGHT
    capacity: int = max(engine.max_batch_size, engine.max_concurrency if engine.concurrent else 0)
    return max(DEFAULT_INFLIGHT, min(capacity, MAX_DEFAULT_INFLIGHT))


@dataclass(frozen=True)
class RunLimits:
    """How much of the machine and the budget a run may take, and what it does with a failure."""

    max_inflight: int | None = option(  # examples running at once; None: examples_in_flight's choice
        None,
        help=f"examples running at once, at most {MAX_INFLIGHT:,} (default: the model engine's batch size or "
        "concurrency, at least 64 and at most 256)",
        identity="never",
        offers={
            **SCORED,
            "rescore": {
                "at_least": 1,
                "help": f"examples scored at once, at most {MAX_INFLIGHT:,} (default: the run's)",
            },
        },
    )
    # each example's ceiling (ragbench._values.ceiling; None: its default): past it, the example fails; not part
    # of the identity: it ends only an example that would not end, and --resume may lift it to try such examples again
    max_steps_per_example: int | None = option(  # model calls, searches, tool and recorded steps
        None,
        metavar="N",
        help=f"each example's ceiling of steps (model calls, searches, tool and recorded steps; default "
        f"{MAX_STEPS:,}): an example that reaches it fails as CeilingReached and the run goes on",
        identity="never",
    )
    max_prompt_chars_per_example: int | None = option(  # characters of the prompts it sends
        None,
        metavar="N",
        help=f"each example's ceiling of characters of prompts sent, summed over its model calls (default "
        f"{MAX_PROMPT_CHARS:,}): an example that reaches it fails as CeilingReached",
        identity="never",
    )
    max_cost: float | None = option(  # this command's calls stop short (ragbench._cost.spending_cap)
        None,
        metavar="DOLLARS",
        help="stop the run before its LLM calls (system model and judges, priced as results.json prices them) would "
        "cost more than this, each batch checked at its worst first; --resume continues",
        identity="never",  # what this command may spend: --resume may give another
    )
    fail_fast: bool = option(  # stop at the first record that fails (StoppedAtFailure), its traceback shown
        False,
        help="stop at the first failed example or bad record and print its traceback (for developing a plugin; "
        "--resume continues the run)",
        identity="never",
    )
    strict_infra: bool = option(  # a failed judge/tool call folded into a result fails its example instead
        False,
        help="fail an example when a judge/tool/retrieval call failed and was folded into its result (upstream's "
        "behaviour, counted, is the default)",
    )

    def problems(self) -> list[str]:
        ceiling = ", or leave it out for the default ceiling"
        return found(
            None if self.max_inflight is None else number_problem("--max-inflight", self.max_inflight, 1),
            too_many("--max-inflight", "max_inflight", self.max_inflight),
            *(
                number_problem(flag, value, 1, ceiling)
                for flag, value in (
                    ("--max-steps-per-example", self.max_steps_per_example),
                    ("--max-prompt-chars-per-example", self.max_prompt_chars_per_example),
                )
                if value is not None
            ),
        )

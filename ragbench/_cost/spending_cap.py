"""`--max-cost DOLLARS`: the run stops before its LLM calls would cost more than that.

The scheduler asks the cap before it sends each batch (`admit`, ragbench._scheduler's `SpendGate`): the dollars this
attempt's calls cost so far (each answer priced as results.json prices it, ragbench._cost.prices), plus the
calls sent and not answered, plus this batch, those two priced at their worst: every prompt at a token per character
(no tokenizer makes fewer characters than tokens of a text, bar a rare emoji or CJK character) plus 8 a chat turn (the
chat template's), and `max_tokens` times `n` of output. Of a batch that would go over the cap, the requests that fit
are sent (the last batch is sized to the budget left) and the rest held back; once no request fits and no call is out
(whose answer, cheaper than its worst, could free some), the run stops as an interrupted run stops (`stop`: the run's
task cancelled once the examples answered saved theirs): its finished examples saved, run.json not finished, and
`--resume` runs the rest (with a --max-cost of its own: the cap is this command's, not the run's over its attempts).
What it counts is the system's model, its role models and the judges; a local model (hf, vllm) without a price costs
nothing here, and a remote one without a price is refused before the run starts (ragbench._cost.prices.check_cap).

The model calls an application makes itself (ragbench._apps: read from its spans once it answered) are made before
ragbench sees them, so no cap can hold them back: each example's are charged as it ends (`charge`), priced by the
price table, and once they bring the spending over the cap, or one has no price, the run stops at once (the examples
in flight are cancelled; those whose application answered are recorded, and `--resume` replays them unpaid)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._config.judging import RunJudging
from .._config.models import RunModels
from .._in_flight import ExamplesInFlight
from .._types import Step
from .._values.billed import TOKEN_COUNTS, Billed
from .._values.llm_request import Request
from .._values.llm_responses import Response
from .prices import ModelPrices, run_prices
from .token_usage import usd_of
from .vendor_prices import Price

TURN_TOKENS = 8  # a chat template's tokens around a turn, at most


def worst_tokens(request: Request) -> tuple[int, int]:
    """The most prompt and output tokens a request can cost (see the module's docstring)."""
    turns = len(request.messages or ())
    tools = sum(len(str(tool.definition)) for tool in request.tools)
    return request.text_length() + tools + TURN_TOKENS * turns, request.sampling.max_tokens * request.sampling.n


class SpendingCap:
    """This attempt's dollars against `cap`: `spent` (calls answered), `reserved` (calls sent, by request, at their
    worst); `reached` once the run was stopped, `refused` then the worst cost of the call that did not fit (its
    dollars, prompt and output tokens). `priced`: each engine's price by id() (None: free)."""

    def __init__(
        self,
        cap: float,
        priced: dict[int, Price | None],
        stop: Callable[[], object],
        prices: ModelPrices | None = None,
        stop_now: Callable[[], object] | None = None,
    ) -> None:
        self.cap, self.priced, self.stop = cap, priced, stop
        self.prices, self.stop_now = prices, stop_now or stop
        self.spent = 0.0
        self.reserved: dict[int, float] = {}
        self.reached = False
        self.refused: tuple[float, int, int] | None = None
        self.unpriced: str | None = None  # why an application's model call could not be counted

    @property
    def left(self) -> float:
        """The dollars the calls not sent yet may still cost, at their worst."""
        return self.cap - self.spent - sum(self.reserved.values())

    def admit(self, engine: Any, requests: list[Request]) -> int:
        """How many of the `requests`, from the first, may be sent: those whose worst costs fit in what is `left`
        (reserved until answered). A batch that does not fit whole is sent in part, the rest held back: the last
        batch before the cap is sized to the budget left. None fits while calls are out: 0, and their answers may
        free some (ask again once one is answered); none fits and none is out: the run stops (`stop`), and from
        then on none is sent."""
        price = self.priced.get(id(engine))
        if self.reached or price is None:
            return 0 if self.reached else len(requests)
        left, admitted = self.left, 0
        for request in requests:
            tokens = worst_tokens(request)
            worst = usd_of(price, *tokens)
            if worst > left:
                if not admitted and not self.reserved:
                    self.reached, self.refused = True, (worst, *tokens)
                    self.stop()
                break
            self.reserved[id(request)] = worst
            left, admitted = left - worst, admitted + 1
        return admitted

    def settle(self, engine: Any, request: Request, result: object) -> None:
        """A call answered: its reserve released, its answer's price spent (an error, what its vendor billed for
        it: `EngineError.billed`)."""
        price = self.priced.get(id(engine))
        self.reserved.pop(id(request), None)
        tokens = result if isinstance(result, Response) else getattr(result, "billed", None)
        if price is not None and isinstance(tokens, (Response, Billed)):
            self.spent += usd_of(price, *(getattr(tokens, count) for count in TOKEN_COUNTS))

    def charge(self, steps: Sequence[Step]) -> None:
        """Model calls already made outside the run's engines (an application's), spent at their role's price; over
        the cap, or a call without a price, stops the run at once (see the module's docstring)."""
        if self.reached or self.prices is None:
            return
        for step in steps:
            priced = self.prices.of(step.role)
            if priced.price is None:
                self.unpriced = priced.note
                break
            self.spent += usd_of(priced.price, *(getattr(step, count) for count in TOKEN_COUNTS))
        if self.unpriced is not None or self.spent > self.cap:
            self.reached = True
            self.stop_now()


class CapStopped(Exception):
    """The calls were stopped by the run's cap (`cap`, reached): what `RunServices.run_calls` raises in place of the
    cancellation the cap caused."""

    def __init__(self, cap: SpendingCap) -> None:
        self.cap = cap
        super().__init__(f"--max-cost ${cap.cap:,.6g} reached")


class SpendingCapReached(Exception):
    """The run stopped at its --max-cost: what it spent, why the next call was not sent, and its examples saved
    (`--resume` runs the rest)."""

    def __init__(self, run_dir: Path, saved: int, total: int | None, cap: SpendingCap) -> None:
        self.run_dir, self.saved, self.total, self.cap = run_dir, saved, total, cap
        of = "" if total is None else f" of {total}"
        why = ""
        if cap.unpriced is not None:
            why = f"; an application's model call cannot be counted: {cap.unpriced}"
        elif cap.refused is None and cap.spent > cap.cap:
            why = "; the application's own model calls went over it (made before ragbench sees them: docs/apps.md)"
        if cap.refused is not None:
            worst, prompt, output = cap.refused
            why = (
                f"; ${max(0.0, cap.left):,.4f} left, less than the next call may cost at its worst (${worst:,.4f}: "
                f"{prompt:,} prompt tokens at a token a character, {output:,} output tokens at its max_tokens)"
            )
        super().__init__(
            f"stopped before the run's calls would cost more than --max-cost ${cap.cap:,.6g}: ${cap.spent:,.4f} spent "
            f"by this command{why}; {saved}{of} examples saved in {run_dir} (--resume runs the rest, spending up to "
            "its own --max-cost)"
        )


def spending_cap(
    cap: float | None,
    models: RunModels,
    judging: RunJudging,
    engines: Any,
    run: asyncio.Task[Any] | None,
    examples: ExamplesInFlight,
    sent_to: Mapping[str, Sequence[str]] | None = None,
) -> SpendingCap | None:
    """The run's cap (`cap`, its --max-cost; None without one) over its `engines`, priced for its `models` and
    `judging` (each sent where `sent_to` says: ragbench._cost.prices.model_urls), stopping the `run` task when
    reached."""
    if cap is None or run is None:
        return None
    prices = run_prices(models, judging, sent_to)
    return SpendingCap(cap, engine_prices(engines, prices), StopOnceSettled(run, examples), prices, run.cancel)


class StopOnceSettled:
    """A capped run's stop: its task cancelled once each of its `examples` in flight waits on a call or ended, so
    that an example whose answer came (the last batch's) saves its sample first; the calls they wait on then are
    the ones the cap holds back."""

    def __init__(self, run: asyncio.Task[Any], examples: ExamplesInFlight) -> None:
        self.run, self.examples = run, examples
        self.stopping: asyncio.Task[None] | None = None

    def __call__(self) -> None:
        if self.stopping is None:
            self.stopping = asyncio.ensure_future(self._stop())

    async def _stop(self) -> None:
        await self.examples.settled(past_leaves=True)
        self.run.cancel()


def engine_prices(engines: Any, prices: ModelPrices) -> dict[int, Price | None]:
    """Each engine of the run (`Engines`) by id(), with the price of its role (ragbench._cost.prices)."""
    roles: list[tuple[Any, str | None]] = [(engines.model, None)]
    roles += [(engine, role) for role, engine in engines.roles.items()]
    roles += [(engine, f"judge:{i}") for i, engine in enumerate(engines.judges)]
    return {id(engine): prices.of(role).price for engine, role in roles if engine is not None}

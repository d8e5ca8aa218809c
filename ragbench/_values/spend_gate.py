"""What a run may spend, as the scheduler (ragbench._scheduler) asks it: `--max-cost`'s gate
(ragbench._run.cost.spending_cap) is one."""

from __future__ import annotations

from typing import Any, Protocol

from .llm_calls import Request


class SpendGate(Protocol):
    """`admit` before a batch is sent (False: it is not, and the gate stops the run), `settle` each answer."""

    def admit(self, engine: Any, requests: list[Request]) -> bool: ...

    def settle(self, engine: Any, request: Request, result: object) -> None: ...


Sent = tuple[SpendGate | None, Any, Request] | None  # a request an engine answered: the gate to tell, the engine

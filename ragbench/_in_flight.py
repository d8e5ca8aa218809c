"""Which of a run's examples in flight still work toward their next pooled call, so that the scheduler
dispatches a batch when every one has queued its call (or ended) - not after a time or a count of
event-loop rounds, which on a slower machine left examples out (several batches where one was due).

Each example worker holds a slot (`ExamplesInFlight.slot`) from its first record to its end: it counts
as working while it reads records, looks up the cache, calls tools or scores, and as blocked while
one of its calls waits for an answer (`waiting_for`, around every `Scheduler.submit`). A call counts
as answered the moment its future is done, before its caller resumes, so the next batch waits for
the callers of the last. An example whose own tasks wait on calls while another of its tasks still
works counts as blocked: that can only make a batch smaller, never leave one waiting forever.

An example that awaits a future another example's call will answer (a shared decision, as `NLI.entails`
dedupes) says so with `waiting_for` too; one that does not would count as working until that call is
answered, and the call waits for it: `settled` gives up waiting once no example has started or stopped waiting
on a call for STALL_SECONDS, and counts it (`stalls`), so such a plugin makes its batches late, never a run that
hangs. A wait during which examples come and go (a long phase of searches on a loaded machine) is not a stall.

A search (`waiting_for(..., leaf=True)`: the retriever's scheduler) is a leaf: it never waits on a model, and the
example goes on to a model call once it is answered. `settled(past_leaves=True)` (the model engines' schedulers)
also waits until no example waits on a search, so that a model batch is chosen from the calls every example
makes next, whenever the retriever's thread answers: the batches stay the same on any machine, and full.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

STALL_SECONDS = 5.0  # no slot changed for this long while some still work: dispatch what is queued
_SLOT: contextvars.ContextVar[_Slot | None] = contextvars.ContextVar("ragbench_example_slot", default=None)


class _Slot:
    def __init__(self, examples: ExamplesInFlight) -> None:
        self.examples = examples
        self.pending: list[tuple[asyncio.Future[Any], bool]] = []  # calls this example waits on, and whether a search
        self.model_calls = 0  # of them not searches

    @property
    def blocked(self) -> bool:
        return any(not future.done() for future, _ in self.pending)

    def blocked_past_leaves(self) -> bool:
        """Blocked on a call that is not a search (so its next move is not a model call made as soon as a search
        answers)."""
        return any(not future.done() for future, leaf in self.pending if not leaf)


class ExamplesInFlight:
    """The slots of a run's example workers; `settled()` waits until each is blocked on a call or ended.

    Whether all are blocked is asked at every call an example makes: the slots waiting on any call, and on a call
    that is not a search, are counted as they start and stop waiting, so that while some example works the answer
    costs no look at every slot (a look at each one's calls, whose answers may have come, is left for when every
    slot waits: it was quadratic in the examples in flight)."""

    def __init__(self) -> None:
        self._slots: set[_Slot] = set()
        self._waiters: list[tuple[asyncio.Future[Any], bool]] = []  # (waiter, past_leaves)
        self._waiting = 0  # slots with a call they wait on
        self._waiting_past_leaves = 0  # slots with a call they wait on that is not a search
        self._changes = 0  # slots that started or stopped waiting on a call, or ended: what a stall lacks
        self.stalls = 0  # times `settled` gave up on a slot that worked STALL_SECONDS with nothing changed

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Held by one example worker (its own task) for as long as it runs."""
        slot = _Slot(self)
        token = _SLOT.set(slot)
        self._slots.add(slot)
        try:
            yield
        finally:
            self._slots.discard(slot)
            _SLOT.reset(token)
            self._changes += 1
            self._wake()

    def is_settled(self, past_leaves: bool = False) -> bool:
        if past_leaves:
            return self._waiting_past_leaves == len(self._slots) and all(
                slot.blocked_past_leaves() for slot in self._slots
            )
        return self._waiting == len(self._slots) and all(slot.blocked for slot in self._slots)

    def _started(self, slot: _Slot, leaf: bool) -> None:
        self._changes += 1
        self._waiting += len(slot.pending) == 1
        if not leaf:
            slot.model_calls += 1
            self._waiting_past_leaves += slot.model_calls == 1

    def _stopped(self, slot: _Slot, leaf: bool) -> None:
        self._changes += 1
        self._waiting -= not slot.pending
        if not leaf:
            slot.model_calls -= 1
            self._waiting_past_leaves -= slot.model_calls == 0

    async def settled(self, past_leaves: bool = False) -> None:
        """Until every example is blocked on a call (`past_leaves`: on a call that is not a search) or ended. Only an
        example working all along, while no other starts or stops waiting, stalls it: a slow search is waited for,
        and so are the searches of a phase that lasts longer than STALL_SECONDS (each timed out wait that saw a
        change starts another), which on a loaded machine made batches that a fast one did not."""
        while not self.is_settled(past_leaves):
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append((waiter, past_leaves))
            changes = self._changes
            try:
                await asyncio.wait_for(asyncio.shield(waiter), STALL_SECONDS)
            except asyncio.TimeoutError:
                if self._changes == changes and not self.is_settled():
                    self.stalls += 1
                    return

    def _wake(self) -> None:
        if not self._waiters or not self.is_settled():
            return
        waiting: list[tuple[asyncio.Future[Any], bool]] = []
        for waiter, past_leaves in self._waiters:
            if waiter.done():
                continue
            if past_leaves and not self.is_settled(past_leaves):
                waiting.append((waiter, past_leaves))
            else:
                waiter.set_result(None)
        self._waiters = waiting


@contextmanager
def waiting_for(future: asyncio.Future[Any], leaf: bool = False) -> Iterator[None]:
    """The calling example (if it holds a slot) waits on `future` meanwhile; `leaf`: a search."""
    slot = _SLOT.get()
    if slot is None:
        yield
        return
    slot.pending.append((future, leaf))
    slot.examples._started(slot, leaf)
    slot.examples._wake()
    try:
        yield
    finally:
        slot.pending.remove((future, leaf))
        slot.examples._stopped(slot, leaf)

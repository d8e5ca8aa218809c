"""Progress bar (tqdm, on stderr): LLM calls answered of the calls expected so far, with an ETA, and the
examples done, calls in flight, cache hits and errors beside it.

Examples run side by side and a multi-step system's examples often end together, so a bar of examples stays at
0 % until the end; calls are answered all along. The calls a run will make are not known in advance: they are
estimated from what is seen (`expected_calls`), and the bar's total (and so its ETA) follows the estimate.
Where the run's number of examples is unknown, the bar counts calls without a total.
"""

from __future__ import annotations

import asyncio
import sys

from .._records import SampleRecord
from .._scheduler import CallStats


def expected_calls(answered: int, examples: int, done: int, done_calls: int, in_flight: int) -> int:
    """The calls a run of `examples` examples is expected to make, seen `answered` calls answered, `done` examples
    ended having made `done_calls` of them, and at most `in_flight` examples running at once: the ended examples'
    mean for every example not begun; for each running one, that mean less what the running ones made so far, and
    at least one call more. With no example ended, the running ones' calls so far plus one make the mean."""
    running = max(0, min(in_flight, examples - done))
    so_far = max(0, answered - done_calls)  # the running examples' calls
    mean = done_calls / done if done else so_far / max(1, running) + 1
    not_begun = max(0, examples - done - running)
    return answered + round(not_begun * mean + max(running, running * mean - so_far))


def llm_steps(record: SampleRecord) -> int:
    """The LLM calls an example made: its system's and its metrics' judges'."""
    return sum(step.kind == "llm" for step in (*record.trace, *record.judge_trace))


class Progress:
    def __init__(self, stats: CallStats, total: int | None, in_flight: int, enabled: bool = True) -> None:
        self.stats = stats
        self.examples = total
        self.in_flight = in_flight
        self.done = self.done_calls = self.errors = 0
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(
                total=self._expected(),
                unit="call",
                desc="ragbench",
                file=sys.stderr,
                mininterval=0.5,
                dynamic_ncols=True,
                smoothing=0,  # the mean rate since the start: calls are answered a batch at a time, in lumps
            )

    def _answered(self) -> int:
        stats = self.stats
        return stats.calls + stats.errors + stats.cache_hits + stats.shared

    def _expected(self) -> int | None:
        if self.examples is None:
            return None
        return expected_calls(self._answered(), self.examples, self.done, self.done_calls, self.in_flight)

    def advance(self, record: SampleRecord, failed: bool = False) -> None:
        """An example ended (its `record` saved)."""
        self.done += 1
        self.done_calls += llm_steps(record)
        self.errors += int(failed)
        self.refresh()

    def refresh(self) -> None:
        if self.bar is None:
            return
        examples = f"{self.done}/{self.examples}" if self.examples is not None else str(self.done)
        stats = self.stats
        self.bar.set_postfix(
            examples=examples, in_flight=stats.in_flight, cache_hits=stats.cache_hits, errors=self.errors, refresh=False
        )
        self.bar.total = self._expected()
        answered = self._answered()
        if answered > self.bar.n:
            self.bar.update(answered - self.bar.n)
        else:
            self.bar.refresh()  # the elapsed time and ETA move on while a batch computes

    async def follow(self, seconds: float = 1.0) -> None:
        """Refresh every `seconds`: calls are answered between examples' ends."""
        while True:
            await asyncio.sleep(seconds)
            self.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.refresh()
            self.bar.close()

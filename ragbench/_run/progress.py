"""Progress bar (tqdm, on stderr): the run's examples done of all its examples, with an ETA, and the LLM calls
answered, calls in flight, cache hits and errors beside it (and the batches out at a vendor's batch API).

The total is the records of every task, known when the run starts (`PlannedRun.known_total`; without one, where a
task cannot tell cheaply, the bar counts examples without a total and has no ETA). Under --resume the examples saved
before count as done as the run passes them (`passed`), so a run that finishes ends at its total.

The ETA comes from the examples this attempt finished, the only measure of the work left that does not grow as the
run goes (the LLM calls a multi-step example makes are known only once it ends): the time so far per finished
example, for each example left, counted down from the last finish; past that estimate, the same from now. Until an
example finishes there is no estimate, but while examples wait for a place to run there is a least one ("ETA at
least 00:40"): the examples waiting, a batch of the examples running at a time, each batch at least as long as the
running ones have taken so far (a multi-step run whose first examples take half an hour says so from the start).
Before an example finishes, a system that bounds the LLM calls of an example (`SystemDeclaration.calls_at_most`: `self_ask`'s
`max_iter`) gives an ETA from the calls: the calls left at most (the examples left times the bound, less the calls
answered) at the pace the calls have been answered so far ("ETA at most 08:20 (5 calls an example at most)"; with
examples waiting, "ETA at least 02:00, at most 08:20"). A multi-step run whose examples all run at once, none
ending for ten minutes, has one from its first answered call. Without a bound there is no total to count down from
(a search budget bounds searches; the one bound, --max-steps-per-example, is a ceiling of 10,000 steps), so the bar
says when an ETA comes and how fast the calls are answered meanwhile ("ETA once an example ends (a call every 4.1
s)", beside the calls answered so far); "ETA estimating" only before a call is answered.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._engines import EMBEDDED_MODEL
from .._engines.batches.board import BatchBoard
from .._engines.local.embedded import conversion_pending
from .._scheduler import CallStats

if TYPE_CHECKING:
    from tqdm import tqdm

ESTIMATING = "estimating"  # the ETA before an example of this attempt has finished or a call was answered
PACE = "once an example ends (a call every {seconds:.1f} s)"  # the ETA while every example runs and none ended
AT_MOST = "at most {time} ({calls} calls an example at most)"  # the ETA from a system's bound on its calls
BAR = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} examples [{elapsed}{postfix}]"
COUNT = "{desc}: {n_fmt} examples [{elapsed}{postfix}]"  # a run whose size is not known
LOADS_WEIGHTS = ("hf", "vllm")  # engines whose models load on this machine: seconds to minutes before a call


def loading_lines(model: str | None) -> list[str]:
    """What the console says before a model of this machine loads (`model`: engine:model, None the embedded one),
    where nothing else moves for a while: converting the embedded model where its copy is not made yet, then
    loading; nothing for a model served elsewhere."""
    spec = model or EMBEDDED_MODEL
    if spec.partition(":")[0] not in LOADS_WEIGHTS:
        return []
    converting = ["converting the embedded model once (about a minute; kept for later runs) ..."]
    return [*(converting if conversion_pending(spec) else []), f"loading model {spec} ..."]


class Progress:
    """The bar of one attempt: `passed` and `advance` count the examples done; `clock` (seconds) times the ETA;
    `batches`: the run's board of the batches out at a vendor's batch API (RunServices.batch_board), shown beside;
    `calls_at_most`: the most LLM calls an example makes (PlannedRun.calls_at_most), None where unbounded."""

    def __init__(
        self,
        stats: CallStats,
        total: int | None,
        enabled: bool = True,
        clock: Callable[[], float] = time.monotonic,
        batches: BatchBoard | None = None,
        calls_at_most: int | None = None,
    ) -> None:
        self.stats, self.known, self.clock, self.batches = stats, total, clock, batches
        self.calls_at_most = calls_at_most
        self.started = self.last_finish = clock()
        self.passed = self.finished = self.errors = self.begun = 0
        self.bar: tqdm[Any] | None = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total,
                desc="ragbench",
                file=sys.stderr,
                mininterval=0.5,
                dynamic_ncols=True,
                bar_format=BAR if total is not None else COUNT,
                postfix=self.beside(),
            )

    @property
    def done(self) -> int:
        return self.passed + self.finished

    @property
    def total(self) -> int | None:
        """The examples of the run: the known total, or more where the data held more records than it told."""
        return None if self.known is None else max(self.known, self.done)

    def pass_saved(self) -> None:
        """An example saved by an earlier attempt was passed (--resume): done, not run again."""
        self.passed += 1
        self.refresh()

    def begin(self) -> None:
        """An example of this attempt began (it is running until `advance`)."""
        self.begun += 1

    def advance(self, failed: bool = False) -> None:
        """An example ended (its sample saved)."""
        self.finished += 1
        self.errors += int(failed)
        self.last_finish = self.clock()
        self.refresh()

    def eta(self) -> float | None:
        """Seconds left, from the examples this attempt finished; None before one has (or with no total)."""
        total = self.total
        if total is None or not self.finished:
            return None
        left = total - self.done
        if not left:
            return 0.0
        now = self.clock()
        countdown = self.last_finish + left * (self.last_finish - self.started) / self.finished - now
        return countdown if countdown > 0 else left * (now - self.started) / self.finished

    def least(self) -> float | None:
        """Seconds left at the least before an example of this attempt finished, where examples wait to begin: the
        examples waiting, in batches of those running, each batch as long as the running ones have taken so far (a
        lower bound where the examples are alike); None with none waiting, none running, or none finished yet."""
        total, running = self.total, self.begun - self.finished
        if total is None or self.finished or running <= 0:
            return None
        waiting = total - self.done - running
        return waiting / running * (self.clock() - self.started) if waiting > 0 else None

    def most(self) -> float | None:
        """Seconds left at the most before an example of this attempt finished, where the system bounds its calls:
        the calls left at most, at the pace calls have been answered so far; None without a bound, a total or an
        answered call, or once an example finished (`eta`)."""
        total, answered = self.total, self.answered
        if total is None or self.finished or self.calls_at_most is None or not answered:
            return None
        left = (total - self.done) * self.calls_at_most - answered
        return max(0.0, left * (self.clock() - self.started) / answered)

    @property
    def answered(self) -> int:
        """The LLM calls answered so far: by an engine, failed, by the cache or by an identical call in flight."""
        stats = self.stats
        return stats.calls + stats.errors + stats.cache_hits + stats.shared

    def eta_text(self) -> str:
        """The ETA (`eta`), else the least one (`least`) and the most one (`most`: `AT_MOST`), else, with calls
        answered, the pace they are answered at (`PACE`: the time so far over them), else "estimating"."""
        from tqdm import tqdm

        seconds = self.eta()
        if seconds is not None:
            return str(tqdm.format_interval(seconds))
        least, most = self.least(), self.most()
        if least and most is not None and most < least:
            most = None  # the calls' pace promises less than the examples waiting take at the least: not kept to
        at_most = None if most is None else AT_MOST.format(time=tqdm.format_interval(most), calls=self.calls_at_most)
        if least:
            return f"at least {tqdm.format_interval(least)}" + (f", {at_most}" if at_most else "")
        if at_most:
            return at_most
        answered = self.answered
        return PACE.format(seconds=(self.clock() - self.started) / answered) if answered else ESTIMATING

    def beside(self) -> str:
        """What the bar shows after the time: the ETA (with a total), the calls answered and in flight, the cache
        hits and the examples that failed; and each batch out at a vendor's batch API (`batch=true`), its state and
        requests done, and the requests waiting on them."""
        stats = self.stats
        answered = self.answered
        eta = f"ETA {self.eta_text()}, " if self.total is not None else ""
        batches = self.batches.line() if self.batches is not None else ""
        return (
            f"{eta}calls {answered}, in flight {stats.in_flight}, cache hits {stats.cache_hits}, failed {self.errors}"
            + (f", {batches}" if batches else "")
        )

    def refresh(self) -> None:
        if self.bar is None:
            return
        self.bar.set_postfix_str(self.beside(), refresh=False)
        self.bar.total = self.total
        if self.done > self.bar.n:
            self.bar.update(self.done - self.bar.n)
        else:
            self.bar.refresh()  # the elapsed time, the ETA and the calls move on while examples run

    async def follow(self, seconds: float = 1.0) -> None:
        """Refresh every `seconds`: calls are answered between examples' ends."""
        while True:
            await asyncio.sleep(seconds)
            self.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.refresh()
            self.bar.close()

"""Progress bar: examples done, LLM calls in flight, cache hits, errors, ETA (tqdm, on stderr)."""

from __future__ import annotations

import sys

from .._scheduler import CallStats


class Progress:
    def __init__(self, stats: CallStats, total: int | None, enabled: bool = True) -> None:
        self.stats = stats
        self.errors = 0
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total, unit="ex", desc="ragbench", file=sys.stderr, mininterval=0.5, dynamic_ncols=True
            )

    def advance(self, failed: bool = False) -> None:
        self.errors += int(failed)
        if self.bar is not None:
            self.bar.set_postfix(
                in_flight=self.stats.in_flight, cache_hits=self.stats.cache_hits, errors=self.errors, refresh=False
            )
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

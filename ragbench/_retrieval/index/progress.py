"""The counter an index build shows on stderr: the one-process build's passages, a shard-parallel build's shards
step by step (`sharding.build.driver`)."""

from __future__ import annotations

from typing import Any

from tqdm import tqdm


def build_progress(corpus: str, kind: str, unit: str, shown: bool, step: str = "", **counts: Any) -> tqdm[Any]:
    """A build's counter on stderr (tqdm; not `shown`: silent): the corpus it indexes, its kind and the `unit`s
    done (a shard-parallel build's shards, a counter a `step`; `counts`: tqdm's total and initial)."""
    return tqdm(
        desc=f"indexing {corpus} ({kind})" + (f", {step}" if step else ""), unit=unit, disable=not shown, **counts
    )

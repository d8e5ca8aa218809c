"""run.json read back typed (`RunRecord`): what --resume, `ragbench rescore` and results.json's cost read of a run
folder's record. `RunDir.meta` reads the file and refuses one ragbench did not write, or of another shape, in one
line (ragbench._storage.run_shapes); a key an older ragbench did not write reads as its empty value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from ..._storage.rundir import RunDir
from .cost_schema import AttemptCost


@dataclass(frozen=True)
class RunRecord:
    """run.json: the run's `config` as run.json and results.json record it (`PlannedRun.full_config`), the options
    that name the run (`identity`, `config_hash`), each task's data fingerprint (`data`), whether it finished
    with each task's record count (`records`), and every attempt's cost (`attempts`)."""

    config: dict[str, Any]
    identity: dict[str, Any]
    config_hash: str
    data: dict[str, Any]
    finished: bool
    records: dict[str, int]
    attempts: list[AttemptCost]

    @classmethod
    def read(cls, run_dir: RunDir) -> RunRecord | None:
        """The run.json in `run_dir`, None where there is none (a damaged one: `ConfigError`, one line)."""
        meta = run_dir.meta
        return None if meta is None else cls.of(meta)

    @classmethod
    def of(cls, meta: dict[str, Any]) -> RunRecord:
        """The record of run.json's object as `RunDir.meta` gives it (its shape checked)."""
        return cls(
            config=meta["config"],
            identity=meta.get("identity") or {},
            config_hash=meta["config_hash"],
            data=meta.get("data") or {},
            finished=bool(meta.get("finished")),
            records=meta.get("records") or {},
            attempts=attempts_of(meta.get("attempts") or []),
        )


def attempts_of(recorded: list[dict[str, Any]]) -> list[AttemptCost]:
    """run.json's `attempts` as each attempt's cost (`RunDir.meta` checked each is an object of counts)."""
    return [cast(AttemptCost, attempt) for attempt in recorded]


def earlier_attempts(run_dir: RunDir, attempt_id: str | None) -> list[AttemptCost]:
    """Every attempt's cost the run's run.json records (as this run last wrote it), but `attempt_id`'s."""
    return [a for a in attempts_of(run_dir.attempts()) if attempt_id is None or a.get("id") != attempt_id]

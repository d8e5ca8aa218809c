"""run.json typed (`RunRecord`): the one record a run folder's run.json is read as (`RunDir.record`: --resume,
`ragbench rescore`, `compare`, the trackers, results.json's cost) and written from (`RunDir`'s writes,
`RunRecord.to_json`), with each attempt's cost (`AttemptCost`, also results.json's `cost.this_attempt`:
ragbench._cost.cost_schema builds on it). It lives with the run folder, which writes it, below the
results that read it.

A run.json of another shape is refused in one line (`RunShapeError`, the first field found: `meta_problem`); a
key an older ragbench did not write reads as its empty value (`finished` and `records`: None, not said)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict, cast

from .run_shapes import meta_problem

if TYPE_CHECKING:  # the JSON types only: ragbench._types is a layer beside this one
    from .._values.json_values import JsonObject, JsonValue

RUN_KEYS = ("config", "config_hash")  # in every run.json ragbench writes


class CallCounts(TypedDict, total=False):
    """The LLM calls' counts of an attempt, or of every attempt added up (the scheduler's, `CallStats.to_dict`;
    `llm_calls`: its `calls`, the requests an engine answered)."""

    llm_calls: int
    batches: int
    cache_hits: int
    shared: int
    errors: int
    cache_errors: int
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int  # of prompt_tokens, read from the vendor's prompt cache (docs/engines.md)
    cache_write_tokens: int  # of prompt_tokens, written to it


class _AttemptCost(CallCounts):
    id: str
    examples: int
    wall_seconds: float


class AttemptCost(_AttemptCost, total=False):
    """One attempt's cost (a run's first, a resume, a rescoring): its id, the examples it saved, its wall time and
    its calls; `interrupted` while it runs (run.json's copy), or when it did not end (ragbench._cost.run_cost)."""

    interrupted: bool


class RunShapeError(ValueError):
    """A run.json object not of the shape ragbench writes: the first field found, as `meta_problem` names it."""


@dataclass(frozen=True)
class RunRecord:
    """run.json: the run's `config` as run.json and results.json record it (`PlannedRun.full_config`: open, as
    the systems' and tasks' options are), the options that name the run (`identity`, `config_hash`), each task's
    data fingerprint (`data`), every attempt's cost (`attempts`), and once it finished, each task's record count
    (`records`). `finished`: None where the file does not say (an older ragbench's)."""

    config: JsonObject
    config_hash: str
    identity: JsonObject = field(default_factory=dict)
    data: JsonObject = field(default_factory=dict)
    finished: bool | None = False
    attempts: list[AttemptCost] = field(default_factory=list)
    records: dict[str, int] | None = None

    @classmethod
    def of(cls, meta: JsonObject) -> RunRecord:
        """The record of run.json's object; `RunShapeError` where a field is not of the shape ragbench writes. A
        key it lacks reads as its empty value (`RunDir.record` refuses a file without `RUN_KEYS`: no run's; the
        viewer shows what it has). The casts name what `meta_problem` checked."""
        problem = meta_problem(meta)
        if problem is not None:
            raise RunShapeError(problem)
        finished = meta.get("finished")
        return cls(
            config=cast("JsonObject", meta.get("config") or {}),
            config_hash=cast(str, meta.get("config_hash") or ""),
            identity=cast("JsonObject", meta.get("identity") or {}),
            data=cast("JsonObject", meta.get("data") or {}),
            finished=None if finished is None else bool(finished),
            attempts=cast("list[AttemptCost]", meta.get("attempts") or []),
            records=cast("dict[str, int] | None", meta.get("records")),
        )

    def to_json(self) -> JsonObject:
        """run.json's object, its keys in the order ragbench writes them (`finished` and `records` where said)."""
        out: JsonObject = {
            "config": self.config,
            "identity": self.identity,
            "config_hash": self.config_hash,
            "data": self.data,
        }
        if self.finished is not None:
            out["finished"] = self.finished
        out["attempts"] = cast("list[JsonValue]", self.attempts)  # TypedDicts: JSON objects of their keys
        if self.records is not None:
            out["records"] = cast("JsonObject", self.records)
        return out

    def problem(self) -> str | None:
        """What in this record its reader (`of`) would refuse, or None: checked before it is written."""
        return meta_problem(self.to_json())

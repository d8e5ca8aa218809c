"""A sample record as an object: what plugin code reads of a finished example.

A system's reporting hooks (`System.statistics`, `format_adherence`, `trace_outline`, `report`) and
`ragbench.testing`'s runs hand out `SampleRecord`s, read from the lines of samples/<task>.jsonl
(written by ragbench._run.example) with `SampleRecord.from_dict`, so the layout of that file is
ragbench's own business, not an API plugins depend on.

The hooks that summarise a whole task (`statistics`, `format_adherence`, `report`) get records
without their texts (`has_text` False): no prompts, replies, raw output, documents shown or judge
calls, so that a large run's figures never hold every page in memory. Steps keep their kind, name,
group, request options, timing, token counts and error; records keep the answer, citations,
extras and scores. `trace_outline` (one example, for the viewer) gets the whole record.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from ._read_only import ReadOnly
from ._types import Document, Step, trace_prompts

_STEP_FIELDS = {f.name for f in fields(Step)}


def step_from_dict(data: dict[str, Any]) -> Step:
    """A trace step from its sample-record form (`Step.to_dict`); unknown keys are dropped, missing
    ones (a record damaged or written by other code) left empty."""
    known = {k: v for k, v in data.items() if k in _STEP_FIELDS and v is not None}
    return Step(**{"kind": "", "name": "", "request": {}, "group": [], **known})


@dataclass
class SampleRecord(ReadOnly):
    """One example as the run recorded it: the example's question, gold and slice fields; what the
    system answered (`answer`, `output` it was made from, `citations`, `docs` shown in order,
    `extras`); every step it made (`trace`, then the metrics' judge calls in `judge_trace`); the
    scores; and what failed (`error`: the example failed or, with `bad_record`, its record could
    not be read; `score_errors`: a metric failed; `infrastructure_failures`: failed calls folded
    into the result)."""

    id: str | None
    index: int = 0  # position in the task's data
    question: str = ""
    gold: dict[str, Any] = field(default_factory=dict)
    gold_references: list[str] = field(default_factory=list)  # the gold as the task reads it (Task.gold_references)
    meta: dict[str, Any] = field(default_factory=dict)
    turns: list[dict[str, str]] | None = None
    answer: str = ""
    output: str | None = None  # the raw model output the answer was made from
    citations: list[list[int]] = field(default_factory=list)
    docs: list[Document] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)
    trace: list[Step] = field(default_factory=list)
    judge_trace: list[Step] = field(default_factory=list)
    scores: dict[str, float | None] = field(default_factory=dict)
    score_errors: dict[str, str] = field(default_factory=dict)
    counted: dict[str, dict[str, int]] = field(default_factory=dict)  # per metric, its counted events
    error: str | None = None
    bad_record: bool = False
    infrastructure_failures: list[str] = field(default_factory=list)
    seconds: float | None = None
    has_text: bool = True  # False: prompts, replies, output, docs and judge calls were left out (see above)

    @classmethod
    def from_dict(cls, record: dict[str, Any], has_text: bool = True) -> SampleRecord:
        """From a line of samples/<task>.jsonl (or the shortened view the reporting hooks are built
        from: `has_text=False`), read-only: the hooks that read a task's records in turn read the same ones."""
        prediction = record.get("prediction") or {}
        return cls(
            id=None if record.get("id") is None else str(record["id"]), index=int(record.get("index") or 0),
            question=record.get("question") or "", gold=dict(record.get("gold") or {}),
            gold_references=list(record.get("gold_references") or []),
            meta=dict(record.get("meta") or {}), turns=record.get("turns"),
            answer=prediction.get("answer", ""), output=record.get("output"),
            citations=list(prediction.get("citations") or []),
            docs=[Document.from_dict(d) for d in prediction.get("docs") or []],
            extras=dict(prediction.get("extras") or {}),
            trace=[step_from_dict(s) for s in record.get("trace") or []],
            judge_trace=[step_from_dict(s) for s in record.get("judge_trace") or []],
            scores=dict(record.get("scores") or {}), score_errors=dict(record.get("score_errors") or {}),
            counted=dict(record.get("counted") or {}), error=record.get("error"),
            bad_record=bool(record.get("bad_record")),
            infrastructure_failures=list(record.get("infrastructure_failures") or []),
            seconds=record.get("seconds"), has_text=has_text).read_only()

    @property
    def prompts(self) -> list[Any]:
        """The prompt (or chat messages) of every LLM call the system made, in call order."""
        if not self.has_text:
            raise ValueError(f"sample {self.id}: this record was read without its texts (a reporting hook's view); "
                             "its prompts are in the run's samples/<task>.jsonl")
        return trace_prompts(step.to_dict() for step in self.trace)

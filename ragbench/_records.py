"""The one typed sample record: a finished example as ragbench reads it, wherever it is read.

A record is written as a line of samples/<task>.jsonl by `sample_line` (the one layout of a line, at its
`schema_version`; `RunDir.append_sample` appends it); a line is read as a
`SampleRecord` through `read_samples` (checked line by line: a line that is not a sample record is a
`RecordError` naming the file and the line, as the run's readers report it) or, for a line already checked,
`sample_record`. A system's reporting hooks (`System.statistics`, `format_adherence`, `trace_outline`,
`report`), the corpus metrics (`Metric.corpus`), `ragbench.testing`'s runs, `rescore` and the viewer read
these records, so the layout of that file is ragbench's own business, not an API plugins depend on; so do the
run, rewriting its checkpoint (`saved_lines`), and a call file's references into the samples
(ragbench._replay.call_refs).

The hooks and metrics that read a whole task (`statistics`, `format_adherence`, `report`, `Metric.corpus`)
get records without their texts (`has_text` False): no prompts, replies, raw output, documents shown or judge
calls, so that a large run's figures never hold every page in memory. Steps keep their kind, name, group,
request options, finish reason, timing, token counts and error; records keep the answer, citations, extras
and scores. `trace_outline` (one example, for the viewer) gets the whole record.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypedDict

from ._errors import RecordError
from ._read_only import ReadOnly, ReadOnlyList
from ._storage.checkpoint import checkpoint_key
from ._storage.jsonl import LocatedLine
from ._storage.run_shapes import SAMPLE_SCHEMA_VERSION
from ._storage.sample_files import ATTEMPT_COST, SavedLine, finalized_samples, located_samples
from ._types import Document, Example, Prediction, Step, trace_prompts
from ._values.json_values import JsonObject

_STEP_FIELDS = {f.name for f in fields(Step)}
_UNREAD = "_unread_steps"  # a record's attribute: the lines of its steps not read yet (`SampleRecord.__getattr__`)


def _read_steps(lines: list[dict[str, Any]], has_text: bool) -> ReadOnlyList:
    """A record's steps from their lines, read-only (`has_text` False: without their texts)."""
    return ReadOnlyList([_read_step(line if has_text else _step_without_texts(line)) for line in lines])


def _read_step(data: dict[str, Any]) -> Step:
    """A trace step from its sample-record form (`Step.to_dict`), read-only, its values copied once
    (`ReadOnly.sealed`); unknown keys are dropped, missing ones (a record damaged or written by other code) left
    empty."""
    known = {k: v for k, v in data.items() if k in _STEP_FIELDS and v is not None}
    return Step.sealed(**{"kind": "", "name": "", "request": {}, "group": [], **known})


def _step_without_texts(step: dict[str, Any]) -> dict[str, Any]:
    """A trace step's line without its prompt, messages, reply and documents (`without_texts`)."""
    return {
        **{k: v for k, v in step.items() if k != "docs"},  # docs: a custom step's
        "response": {"finish_reason": (step.get("response") or {}).get("finish_reason")},
        "request": {k: v for k, v in (step.get("request") or {}).items() if k not in ("prompt", "messages")},
    }


def without_texts(line: dict[str, Any]) -> dict[str, Any]:
    """A sample line without the copies of prompts, replies and documents (trace steps keep their kind, name,
    token counts, request options and finish reason; the prediction its answer, citations and extras): what
    a record read without its texts is made of, so a task's results never hold its samples' text."""
    view = {k: v for k, v in line.items() if k not in ("trace", "judge_trace", "output")}
    if "trace" in line:
        view["trace"] = [_step_without_texts(step) for step in line["trace"]]
    if "prediction" in line:
        view["prediction"] = {k: v for k, v in line["prediction"].items() if k not in ("docs", "raw_output")}
    return view


class _RatingEntry(TypedDict):
    raters: list[str]
    scores: dict[str, list[float | None]]


class RatingEntry(_RatingEntry, total=False):
    """A record's `judge_ratings` entry of one judged metric (ragbench._run.judges.raters.rating_entry): its raters'
    labels, how many of them the headline averages (absent from records written before it was: 1), each key's
    value per rater (None where that rater gave none, or failed) and each failed rater's error."""

    averaged: int
    errors: dict[str, str]


@dataclass
class SampleRecord(ReadOnly):
    """One example as the run recorded it: the example's question, gold and slice fields; what the
    system answered (`answer`, `output` it was made from, `citations`, `docs` shown in order,
    `extras`); every step it made (`trace`, then the metrics' judge calls in `judge_trace`; the calls of the
    runs of its example it superseded, `earlier_trace`, paid); the
    scores; and what failed (`error`: the example failed or, with `bad_record`, its record could
    not be read; `score_errors`: a metric failed; `infrastructure_failures`: failed calls folded
    into the result). `schema_version`: the version of the line it was read from (1: written before
    the version was)."""

    id: str | None
    index: int = 0  # position in the task's data
    question: str = ""
    gold: dict[str, Any] = field(default_factory=dict)
    gold_references: list[str] = field(default_factory=list)  # the gold as the task reads it (Task.gold_references)
    meta: dict[str, Any] = field(default_factory=dict)
    turns: list[dict[str, str]] | None = None
    images: list[dict[str, Any]] = field(default_factory=list)  # the example's images, by digest (`Image.record`)
    answer: str = ""
    output: str | None = None  # the raw model output the answer was made from
    citations: list[list[int]] = field(default_factory=list)
    docs: list[Document] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)
    trace: list[Step] = field(default_factory=list)
    judge_trace: list[Step] = field(default_factory=list)
    # the LLM calls of the example's runs this one superseded, token counts only (ragbench._storage.earlier_runs)
    earlier_trace: list[Step] = field(default_factory=list)
    scores: dict[str, float | None] = field(default_factory=dict)
    score_errors: dict[str, str] = field(default_factory=dict)
    counted: dict[str, dict[str, int]] = field(default_factory=dict)  # per metric, its counted events
    # per judged metric scored by several raters, their values (ragbench._run.judges.raters.rating_entry)
    judge_ratings: dict[str, RatingEntry] = field(default_factory=dict)
    error: str | None = None
    bad_record: bool = False
    infrastructure_failures: list[str] = field(default_factory=list)
    seconds: float | None = None
    has_text: bool = True  # False: prompts, replies, output, docs and judge calls were left out (see above)
    raw_output: str | None = None  # the prediction's own raw output, where it differs from its answer
    example_sha256: str | None = None  # the digest of the example it ran (what --resume compares)
    traceback: str | None = None  # what the system raised, for its developer
    score_tracebacks: dict[str, str] = field(default_factory=dict)  # metric -> what it raised
    gold_references_error: str | None = None  # why the task could not read the gold
    rescored: bool = False  # its metrics scored it again (--resume, `ragbench rescore`)
    schema_version: int = SAMPLE_SCHEMA_VERSION

    @classmethod
    def from_dict(cls, record: dict[str, Any], has_text: bool = True, *, owned: bool = False) -> SampleRecord:
        """From a line of samples/<task>.jsonl, checked (`read_samples`), its values copied read-only once
        (`ReadOnly.sealed`); `has_text=False`: without its texts (`without_texts`). `owned`: `record` is the
        reader's own (a line it just parsed): its trace steps are made records when they are first read, which
        aggregation and `compare` never do for most. Read-only: the hooks that read a task's records in turn
        read the same ones."""
        prediction = record.get("prediction") or {}
        steps = {
            "trace": record.get("trace") or [],
            "judge_trace": (record.get("judge_trace") or []) if has_text else [],
            "earlier_trace": record.get("earlier_trace") or [],
        }
        made = cls.sealed(
            id=line_id(record),
            index=line_index(record),
            question=record.get("question") or "",
            gold=record.get("gold") or {},
            gold_references=record.get("gold_references") or [],
            meta=record.get("meta") or {},
            turns=record.get("turns"),
            images=record.get("images") or [],
            answer=prediction.get("answer") or "",
            output=record.get("output") if has_text else None,
            citations=prediction.get("citations") or [],
            docs=[Document.from_dict(d) for d in prediction.get("docs") or []] if has_text else [],
            extras=prediction.get("extras") or {},
            scores=record.get("scores") or {},
            score_errors=record.get("score_errors") or {},
            counted=record.get("counted") or {},
            judge_ratings=record.get("judge_ratings") or {},
            error=record.get("error"),
            bad_record=bool(record.get("bad_record")),
            infrastructure_failures=record.get("infrastructure_failures") or [],
            seconds=record.get("seconds"),
            has_text=has_text,
            raw_output=prediction.get("raw_output") if has_text else None,
            example_sha256=record.get("example_sha256"),
            traceback=record.get("traceback"),
            score_tracebacks=record.get("score_tracebacks") or {},
            gold_references_error=record.get("gold_references_error"),
            rescored=line_rescored(record),
            schema_version=record.get("schema_version", 1),
            **({} if owned else {name: _read_steps(lines, has_text) for name, lines in steps.items()}),
        )
        if owned:  # the steps' fields, left at their defaults above, are made on first read (`__getattr__`)
            for name in steps:
                del made.__dict__[name]
            made.__dict__[_UNREAD] = steps
        return made

    def __getattr__(self, name: str) -> Any:
        """`trace` or `judge_trace` of a record read with `owned` lines: its steps, made when first read."""
        unread = self.__dict__.get(_UNREAD)
        if unread is None or name not in unread:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        steps = self.__dict__[name] = _read_steps(unread.pop(name), self.__dict__["has_text"])
        if not unread:
            del self.__dict__[_UNREAD]
        return steps

    def _field_values(self) -> dict[str, object]:
        for name in list(self.__dict__.get(_UNREAD, ())):
            getattr(self, name)
        return self.__dict__

    @property
    def prompts(self) -> list[Any]:
        """The prompt (or chat messages) of every LLM call the system made, in call order."""
        if not self.has_text:
            raise ValueError(
                f"sample {self.id}: this record was read without its texts (a reporting hook's view); "
                "its prompts are in the run's samples/<task>.jsonl"
            )
        return trace_prompts(step.to_dict() for step in self.trace)

    def example(self) -> Example:
        """The example this record ran, read-only (as the run handed it to the system and the metrics)."""
        return Example(
            id=self.id or "",
            question=self.question,
            gold=dict(self.gold),
            meta=dict(self.meta),
            turns=self.turns,
            index=self.index,
        ).read_only()

    def prediction(self) -> Prediction:
        """The prediction the metrics scored, read-only, with the system's trace."""
        return Prediction(
            example_id=self.id or "",
            answer=self.answer,
            raw_output=self.raw_output,
            citations=list(self.citations),
            docs=list(self.docs),
            trace=list(self.trace),
            extras=dict(self.extras),
        ).read_only()


def sample_line(record: SampleRecord) -> JsonObject:
    """The one layout of a sample, the line of samples/<task>.jsonl a record is written as: `schema_version` first;
    a bad record's line its id, error, flag and position; an example's its fields in the order below, where a
    field left at a default its reader reads the same when absent (no slice fields, turns, traceback, counted
    events, metric errors, judge calls, folded failures) is not written, nor the scores of an example that
    failed before its metrics ran. Each trace step becomes its dict here, once per line (`Step.to_dict`)."""
    if record.bad_record:
        return {
            "schema_version": SAMPLE_SCHEMA_VERSION,
            "id": record.id,
            "error": record.error,
            "bad_record": True,
            "index": record.index,
        }
    line: dict[str, Any] = {
        "schema_version": SAMPLE_SCHEMA_VERSION,
        "index": record.index,
        "id": record.id,
        "question": record.question,
        "gold": record.gold,
    }
    _put(line, meta=record.meta, turns=record.turns, images=record.images, example_sha256=record.example_sha256)
    if record.gold_references_error is None:
        line["gold_references"] = record.gold_references
    else:
        line["gold_references_error"] = record.gold_references_error
    prediction: JsonObject = {"answer": record.answer}
    _put(
        prediction,
        raw_output=record.raw_output,
        citations=record.citations,
        docs=[doc.to_dict() for doc in record.docs],
        extras=record.extras,
    )
    line["prediction"] = prediction
    _put(line, output=record.output)
    line.update(trace=[step.to_dict() for step in record.trace], error=record.error)
    _put(line, traceback=record.traceback)
    if record.error is None or record.scores:
        line["scores"] = record.scores
    _put(
        line,
        counted=record.counted,
        judge_ratings=record.judge_ratings,
        score_errors=record.score_errors,
        score_tracebacks=record.score_tracebacks,
        judge_trace=[step.to_dict() for step in record.judge_trace],
        earlier_trace=[step.to_dict() for step in record.earlier_trace],
        infrastructure_failures=record.infrastructure_failures,
        seconds=record.seconds,
        rescored=record.rescored,
    )
    return line


def _put(line: JsonObject, **values: Any) -> None:
    """`values` into `line`, in order, but for those at their default (None, empty, False): their absence reads
    the same."""
    line.update(
        (name, value)
        for name, value in values.items()
        if value is not None and value != [] and value != {} and value is not False
    )


def read_samples(
    path: str | Path,
    errors: list[RecordError] | None = None,
    *,
    has_text: bool = True,
    older_shapes: bool = False,
    rewritten: bool = False,
) -> Iterator[SampleRecord]:
    """The sample records of a samples file, one at a time: the one reader of samples/<task>.jsonl. A line that
    is no sample record (cut short, not JSON, of another shape or a newer `schema_version`) is passed over and
    added to `errors` as a `RecordError` naming the file and the line; `older_shapes`: an older ragbench's line
    is brought to the current shape first (`in_current_shape`); `rewritten`: a file `RunDir.finalize_samples`
    rewrote, whose lines were checked as they were copied there, so here they are only parsed."""
    if rewritten:
        for line in finalized_samples(Path(path)):
            yield SampleRecord.from_dict(line, has_text, owned=True)
        return
    for located in located_records(path, has_text=has_text, older_shapes=older_shapes):
        if isinstance(located.value, SampleRecord):
            yield located.value
        elif errors is not None:
            errors.append(located.value)


def read_rewritten_twice(path: str | Path) -> Iterator[tuple[SampleRecord, SampleRecord]]:
    """Each record of a samples file `RunDir.finalize_samples` rewrote as (without its texts, whole), both made from
    one parse of its line: the run's end reads the file once for its aggregation (records without texts, some of
    which the corpus metrics keep) and its cost tallies (whole records, dropped once counted)."""
    for line in finalized_samples(Path(path)):
        yield SampleRecord.from_dict(line, has_text=False, owned=True), SampleRecord.from_dict(line, owned=True)


def located_records(
    path: str | Path, *, has_text: bool = True, older_shapes: bool = False, line: int = 0, start: int = 0
) -> Iterator[LocatedLine]:
    """`read_samples` with where each line is: every line of a samples file as a `LocatedLine` (line index, byte
    offsets) whose value is its `SampleRecord` or its `RecordError`; `line` and `start`: read on from that line
    (a reader that keeps each record's offset, not the record, and reads one again: `record_at`)."""
    for located in located_samples(path, older_shapes, line, start):
        if isinstance(located.value, RecordError):
            yield located
        else:
            number, begins, ends, ended, value = located
            yield LocatedLine(number, begins, ends, ended, SampleRecord.from_dict(value, has_text, owned=True))


def saved_lines(path: Path, errors: list[RecordError]) -> Iterator[SavedLine]:
    """`read_samples` of a run's checkpoint, as `RunDir.finalize_samples` rewrites it: each record's line, its
    checkpoint key and position, the cost of the attempt that saved it (on the line beside the record) and whether
    it re-scored the line before it."""
    for located in located_samples(path):
        line = located.value
        if isinstance(line, RecordError):
            errors.append(line)
            continue
        index = line_index(line)  # the three fields as `SampleRecord.from_dict` reads them, with no record made
        yield SavedLine(
            located.line, checkpoint_key(line_id(line), index), index, line.get(ATTEMPT_COST), line_rescored(line)
        )


def line_id(line: JsonObject) -> str | None:
    """A checked sample line's example id, as its record holds it."""
    value = line.get("id")
    return None if value is None else str(value)


def line_index(line: JsonObject) -> int:
    """A checked sample line's position in its task's data, as its record holds it."""
    index = line.get("index") or 0
    return int(index) if isinstance(index, (int, float, str)) else 0  # a checked line's is a whole number


def line_rescored(line: JsonObject) -> bool:
    """Whether a checked sample line's metrics scored it again, as its record holds it."""
    return bool(line.get("rescored"))


def record_at(
    path: str | Path, line: int, start: int, *, has_text: bool = True, older_shapes: bool = False
) -> SampleRecord | RecordError:
    """The record of the line at byte offset `start` (its 0-based index `line`), read and checked as
    `read_samples` reads it, or its RecordError (one when the file holds no line there now)."""
    located = next(located_records(path, has_text=has_text, older_shapes=older_shapes, line=line, start=start), None)
    if located is None:
        return RecordError(str(path), line + 1, "no line here now (the file was changed since it was read)")
    record: SampleRecord | RecordError = located.value  # what located_records reads a line as
    return record

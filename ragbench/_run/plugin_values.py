"""What a system hands the run for one example, and the sample record made of it, checked before either is
taken: a `System.run` that returns no `Prediction`, or one whose fields are not of their types or hold what
JSON cannot (ragbench._values.json_values: a set, a cycle, a 5,000-digit integer, more than a sample may
hold), fails that example, named and counted, before any metric reads it. A sample record is written only
when ragbench's own reader reads its line back as written (`sample_line`, then `sample_problem`, the reader's
rule, and `json_problem`) and it is within the bounds of a sample's size: else its example fails with a
record that can be (what a task's example or a system's custom step held is named, a value over a bound at
its path). A line is made into its JSON text once, which the checks read where they can (`plainly_json`: the
walk over every value cost an example more of the event loop than writing the line) and the run writes. A task whose `examples()` raises (whatever it raises) ends its stream there with a bad record
saying why and where, and the records before it run (`task_records`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from .._errors import RecordError
from .._plugin_calls import PluginCall
from .._records import SampleRecord, sample_line
from .._storage.jsonl import dumps, plain_dumps
from .._storage.run_shapes import sample_problem
from .._task import Task
from .._types import Document, Example, Prediction
from .._values.json_values import checked_json, json_problem, plainly_json, text_problem

NONE = type(None)
FIELDS = {
    "answer": (str,),
    "raw_output": (str, NONE),
    "error": (str, NONE),
    "citations": (list,),
    "docs": (list,),
    "extras": (dict,),
}
FIX = (
    "return a ragbench.api.Prediction: answer a str, citations lists of document numbers, docs Documents, extras "
    "JSON values (docs/writing-plugins.md)"
)
KEPT = ("index", "id", "example_sha256", "question")  # of a record that cannot be written: what its failure keeps


def prediction_problem(system: str, value: Any) -> str | None:
    """Why `value`, returned by `system`'s run, is no prediction the run can take (one line naming the system,
    what it returned and the fix), or None."""
    if not isinstance(value, Prediction):
        return f"InvalidPrediction: system {system} returned {type(value).__name__}, not a Prediction; {FIX}"
    wrong = next(
        (
            f"`{name}` is {type(getattr(value, name)).__name__}"
            for name, kinds in FIELDS.items()
            if not isinstance(getattr(value, name), kinds)
        ),
        None,
    )
    if wrong is None and not all(
        isinstance(cited, list) and all(type(n) is int for n in cited) for cited in value.citations
    ):
        wrong = "`citations` is not a list of lists of document numbers"
    if wrong is None and not all(isinstance(doc, Document) for doc in value.docs):
        wrong = "`docs` holds what is not a Document"
    if wrong is None:
        wrong = plain_json_problem(value.to_dict(), "prediction")
    return None if wrong is None else f"InvalidPrediction: system {system} returned a Prediction whose {wrong}; {FIX}"


def plain_json_problem(value: Any, where: str) -> str | None:
    """`json_problem(value, where)`, found from the value's JSON text where it plainly has none (`plainly_json`)."""
    text = plain_dumps(value)
    return None if text is not None and plainly_json(text) else json_problem(value, where)


class Sample(NamedTuple):
    """A sample record, its line (`sample_line`), which ragbench's reader reads back as written, and the line's
    text as the run writes it (`dumps`)."""

    record: SampleRecord
    line: dict[str, Any]
    text: str


def writable_sample(record: SampleRecord) -> Sample:
    """`record` and its line when the samples' reader reads the line back as written, else its example's failed
    record saying why (itself writable: --resume runs the example again)."""
    line = sample_line(record)
    text = plain_dumps(line)
    if text is not None and plainly_json(text):
        problem = sample_problem(line)
    else:
        checked = checked_json(line, "sample")
        problem = sample_problem(line) or checked.problem or text_problem(line, "sample", checked.bytes, written_bytes)
    if problem is None:
        return Sample(record, line, text if text is not None else dumps(line))
    kept = {name: getattr(record, name) for name in KEPT if json_problem(getattr(record, name), name) is None}
    failed = SampleRecord.sealed(
        **kept,
        error=f"UnwritableSample: {problem}; every value a task, system or metric "
        "hands ragbench must be JSON, of bounded size (docs/writing-plugins.md)",
    )
    failed_line = sample_line(failed)
    return Sample(failed, failed_line, dumps(failed_line))


def written_bytes(line: dict[str, Any]) -> int:
    """The bytes of a sample line as the writer writes it."""
    return len(dumps(line).encode("utf-8"))


def task_records(task: Task) -> Iterator[Example | RecordError]:
    """The task's `examples()`; one that raises ends with a `RecordError` at the record it stopped before
    (a generator that raised yields nothing more), counted as a bad record of the task."""
    read = 0
    with PluginCall() as call:
        stream = iter(task.examples())
    while call.error is None:
        with PluginCall() as call:
            item = next(stream, None)  # None: the end (examples yields examples and bad records)
        if call.error is not None:
            break
        if item is None:
            return
        read += 1
        yield item  # outside the guard: what the reader throws in here (GeneratorExit) is not the task's
    yield RecordError(
        task.name,
        read + 1,
        f"the task's examples() raised {call.error}: no record after it could be "
        "read; fix the task's loader (ragbench check shows it too)",
    )
